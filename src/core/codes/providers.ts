import { defineCodes } from "./define.js";

/** Error codes of src/providers. Add a code here, then run `npm run docs:errors`. */
export const providersCodes = defineCodes([]);

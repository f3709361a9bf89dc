import { defineCodes } from "./define.js";

/** Error codes of src/store. Add a code here, then run `npm run docs:errors`. */
export const storeCodes = defineCodes([]);

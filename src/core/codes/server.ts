import { defineCodes } from "./define.js";

/** Error codes of src/server. Add a code here, then run `npm run docs:errors`. */
export const serverCodes = defineCodes([]);

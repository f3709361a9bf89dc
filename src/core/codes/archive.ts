import { defineCodes } from "./define.js";

/** Error codes of src/archive. Add a code here, then run `npm run docs:errors`. */
export const archiveCodes = defineCodes([]);

import { defineCodes } from "./define.js";

/** Error codes of src/format. Add a code here, then run `npm run docs:errors`. */
export const formatCodes = defineCodes([]);

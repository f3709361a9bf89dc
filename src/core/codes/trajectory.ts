import { defineCodes } from "./define.js";

/** Error codes of src/trajectory. Add a code here, then run `npm run docs:errors`. */
export const trajectoryCodes = defineCodes([]);

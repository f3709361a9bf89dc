import { defineCodes } from "./define.js";

/** Error codes of src/gateway. Add a code here, then run `npm run docs:errors`. */
export const gatewayCodes = defineCodes([]);

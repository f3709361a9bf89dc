import { defineCodes } from "./define.js";

/** Error codes of src/conversation. Add a code here, then run `npm run docs:errors`. */
export const conversationCodes = defineCodes([]);

import { defineCodes } from "./define.js";

/** Error codes of src/cli-agents. Add a code here, then run `npm run docs:errors`. */
export const cliAgentsCodes = defineCodes([]);

import { defineCodes } from "./define.js";

/** Error codes of src/format. Add a code here, then run `npm run docs:generate`. */
export const formatCodes = defineCodes([
  {
    code: "unreadable_conversation",
    httpStatus: 422,
    meaning:
      "A conversation.json cannot be read as format 1: not UTF-8, not JSON, a repeated key, another formatVersion, or a field format 1 does not allow.",
    remedy:
      "Read the reason (JSON path and what was expected; docs/format-1.md, Decoding). Fix the file, or let the next turn replace it.",
  },
]);

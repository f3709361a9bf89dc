import { defineCodes } from "./define.js";

/** Error codes of src/trajectory. Add a code here, then run `npm run docs:errors`. */
export const trajectoryCodes = defineCodes([
  {
    code: "trajectory_row_invalid",
    httpStatus: 400,
    meaning:
      "A stored trajectory row (or an item to append) does not match the row or item schema of docs/trajectories.md.",
    remedy: "Fix the reported field (the line number is given for JSON Lines input).",
  },
  {
    code: "trajectory_rows_inconsistent",
    httpStatus: 400,
    meaning:
      "The rows of a turn repeat or skip a position, or repeat an item key, so they cannot be the rows a store holds.",
    remedy: "Pass each turn's rows exactly as the store returns them.",
  },
  {
    code: "trajectory_page_limit_too_small",
    httpStatus: 400,
    meaning: "A page cannot fit the size limit even with every message content cut to nothing.",
    remedy: "Raise the page limit to the size the message names, or select fewer messages.",
  },
  {
    code: "trajectory_item_key_conflict",
    httpStatus: 409,
    meaning:
      "An item was appended with an item key the turn already holds for a different item; stored items are never rewritten.",
    remedy:
      "Use a new item key for a new item; repeat a key only to retry the same append (then it is idempotent).",
  },
]);

import { defineCodes } from "./define.js";

/** Error codes of src/trajectory. Add a code here, then run `npm run docs:errors`. */
export const trajectoryCodes = defineCodes([
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
]);

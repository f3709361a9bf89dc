import { defineCodes } from "./define.js";

/** Error codes of src/pricing. Add a code here, then run `npm run docs:generate`. */
export const pricingCodes = defineCodes([
  {
    code: "pricing_table_invalid",
    httpStatus: 500,
    meaning: "A bundled pricing data table (context windows, image prices) does not validate.",
    remedy: "Fix the data file named in the message; each row needs the fields documented in it.",
  },
]);

import { defineCodes } from "./define.js";

/** Error codes of src/conversation. Add a code here, then run `npm run docs:errors`. */
export const conversationCodes = defineCodes([
  {
    code: "conversation_item_not_found",
    httpStatus: 404,
    meaning:
      "An operation named a panel item or queued message that the conversation does not hold.",
    remedy:
      "Pass the id of an item (or queued message) of this conversation, as its panel shows it.",
  },
  {
    code: "approval_already_answered",
    httpStatus: 409,
    meaning: "A tool approval was answered a second time.",
    remedy: "Answer each tool approval once; its card state says how it was answered.",
  },
]);

export { VerbatimError, isVerbatimError } from "./errors.js";
export type { VerbatimErrorOptions } from "./errors.js";
export {
  allErrorCodes,
  errorCodeDefinition,
  errorCodeGroups,
  httpStatusOf,
  registerErrorCodes,
} from "./error-codes.js";
export type { ErrorCode, ErrorCodeGroups } from "./error-codes.js";
export type { ErrorCodeDefinition } from "./codes/define.js";
export { canonicalJsonBytes, canonicalJsonText } from "./canonical-json.js";
export {
  decodeJsonBytes,
  parseStrictJson,
  safeParseStrictJson,
  safeParseStrictJsonInSlices,
} from "./strict-json.js";
export type { JsonObject, JsonSyntaxProblem, JsonValue, StrictParseResult } from "./strict-json.js";
export { isSha256Hex, sha256Hex } from "./hash.js";
export {
  STORED_TEXT_HINT,
  describeStoredTextFault,
  findStoredTextFault,
  isStorableText,
  repairStoredText,
  storedTextFaultWhere,
} from "./stored-text.js";
export type { StoredTextFault, StoredTextProblem } from "./stored-text.js";
export { isWellFormedText } from "./bytes.js";

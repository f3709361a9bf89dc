export { VerbatimError, isVerbatimError } from "./errors.js";
export type { VerbatimErrorOptions } from "./errors.js";
export {
  allErrorCodes,
  errorCodeDefinition,
  errorCodeGroups,
  httpStatusOf,
} from "./error-codes.js";
export type { ErrorCode } from "./error-codes.js";
export type { ErrorCodeDefinition } from "./codes/define.js";
export {
  CanonicalFragment,
  canonicalJsonBytes,
  canonicalJsonFragment,
  canonicalJsonText,
} from "./canonical-json.js";
export {
  decodeJsonBytes,
  formatJsonPath,
  parseStrictJson,
  safeParseStrictJson,
} from "./strict-json.js";
export type { JsonObject, JsonSyntaxProblem, JsonValue, StrictParseResult } from "./strict-json.js";
export { isSha256Hex, sha256Hex } from "./hash.js";
export {
  BASE64_PATTERN,
  base64Decode,
  base64Encode,
  isBase64,
  isWellFormedText,
  utf8DecodeLenient,
  utf8DecodeStrict,
  utf8Encode,
} from "./bytes.js";

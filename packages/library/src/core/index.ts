export { VerbatimError, isVerbatimError } from "./errors.js";
export type { VerbatimErrorOptions } from "./errors.js";
export { allErrorCodes, errorCodeDefinition, httpStatusOf } from "./error-codes.js";
export type { ErrorCode, ErrorCodeGroups } from "./error-codes.js";
export type { ErrorCodeDefinition } from "./codes/define.js";
export { canonicalJsonBytes, canonicalJsonText } from "./canonical-json.js";
export { parseStrictJson, safeParseStrictJson } from "./strict-json.js";
export type { JsonObject, JsonSyntaxProblem, JsonValue, StrictParseResult } from "./strict-json.js";
export { sha256Hex } from "./hash.js";

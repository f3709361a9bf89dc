import { defineCodes } from "./define.js";

/** Error codes of src/server. Add a code here, then run `npm run docs:generate`. */
export const serverCodes = defineCodes([
  {
    code: "invalid_request",
    httpStatus: 400,
    meaning:
      "An HTTP request's body, query or path parameters do not match the route's schema (docs/openapi.json).",
    remedy:
      "Read `where` for the field and the message for what was expected; fix the request. Nothing was written.",
  },
  {
    code: "unauthorized",
    httpStatus: 401,
    meaning:
      "The request carries no credential, or an unknown or revoked one, for a route that needs one.",
    remedy:
      "Send `Authorization: Bearer <token>`: the operator token for console routes, an API key (`verbatim keys create`) for /v1 and job routes.",
  },
  {
    code: "route_not_found",
    httpStatus: 404,
    meaning: "No route answers this method and path.",
    remedy: "Check the method and path against docs/server.md.",
  },
  {
    code: "resource_not_found",
    httpStatus: 404,
    meaning:
      "The id in the path names nothing this credential can see (missing, or owned by another subject).",
    remedy: "Check the id; ids of another subject are never visible.",
  },
  {
    code: "payload_too_large",
    httpStatus: 413,
    meaning: "The request body is larger than the server's body limit.",
    remedy: "Send a smaller body, or raise the limit with VERBATIM_BODY_LIMIT_BYTES on the server.",
  },
  {
    code: "unsupported_media_type",
    httpStatus: 415,
    meaning: "The request body is not `application/json`.",
    remedy: "Send JSON with `Content-Type: application/json`.",
  },
  {
    code: "rate_limited",
    httpStatus: 429,
    meaning: "This API key sent more requests than its rate limit allows.",
    remedy:
      "Wait the number of seconds in the Retry-After header, or raise VERBATIM_RATE_LIMIT_PER_MINUTE on the server.",
  },
  {
    code: "upstream_not_configured",
    httpStatus: 503,
    meaning: "No upstream model provider is configured for the requested model.",
    remedy:
      "Set ANTHROPIC_API_KEY or OPENAI_API_KEY (and optionally ANTHROPIC_BASE_URL / OPENAI_BASE_URL) in the server's environment, or map the model with VERBATIM_MODEL_PROVIDERS (docs/server.md).",
  },
  {
    code: "upstream_failed",
    httpStatus: 502,
    meaning: "The upstream model provider answered with an error or an unreadable response.",
    remedy:
      "Read the message for the provider's status and error; retry, or check the provider's key and model.",
  },
  {
    code: "upstream_timeout",
    httpStatus: 504,
    meaning: "The upstream model provider did not answer in time.",
    remedy: "Retry later, or raise VERBATIM_UPSTREAM_TIMEOUT_MS on the server.",
  },
  {
    code: "api_key_not_found",
    httpStatus: 404,
    meaning: "The API key given to `verbatim keys revoke` is not stored in this database.",
    remedy: "Check the key and the --db it was created in.",
  },
]);

import type { ErrorCodeDefinition } from "verbatim-llm/core";
import { registerErrorCodes } from "verbatim-llm/internal";

/**
 * The error codes the server layer raises (docs/errors.md, group "server"). Add a code here, then
 * run `npm run docs:generate`. Importing this module registers them (the entry point does).
 */
export const serverCodes = [
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
    remedy: "Check the method and path against docs/server/README.md.",
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
    meaning:
      "The request body is not `application/json` in UTF-8: another media type, another `charset`, or a `Content-Encoding` (gzip, …) the server does not decode.",
    remedy:
      "Send JSON encoded as UTF-8 with `Content-Type: application/json` (a `charset` parameter, if any, must be `utf-8`) and no `Content-Encoding`.",
  },
  {
    code: "invalid_utf8",
    httpStatus: 400,
    meaning:
      "The request body is not valid UTF-8 (`where` names the byte offset of the first bad byte).",
    remedy:
      "Encode the body as UTF-8; the server never reads a body in another encoding nor replaces bad bytes. Nothing was written.",
  },
  {
    code: "invalid_url",
    httpStatus: 400,
    meaning:
      "The URL's path or query has a bad percent-encoding (a `%` not followed by two hex digits, or bytes that are not UTF-8).",
    remedy: "Percent-encode the path and query as UTF-8 (encodeURIComponent).",
  },
  {
    code: "malformed_request",
    httpStatus: 400,
    meaning:
      "The bytes received are not an HTTP/1.1 request the server can read (an unknown method, a bad Content-Length or Transfer-Encoding, a broken header line); the connection is closed.",
    remedy: "Send a well-formed HTTP/1.1 request; an HTTP client library does.",
  },
  {
    code: "method_not_allowed",
    httpStatus: 405,
    meaning:
      "The path exists but not with this method; the `Allow` header and `details.allowed_methods` list the methods it takes.",
    remedy: "Use one of the allowed methods (docs/server/README.md lists the routes).",
  },
  {
    code: "request_timeout",
    httpStatus: 408,
    meaning:
      "The request's headers, or its whole body, did not arrive in time (VERBATIM_HEADERS_TIMEOUT_MS, VERBATIM_BODY_TIMEOUT_MS); the connection is closed.",
    remedy:
      'Send the request at once, or raise the timeouts on the server (docs/server/README.md, "Timeouts"). Nothing was written.',
  },
  {
    code: "url_too_long",
    httpStatus: 414,
    meaning:
      "A path segment is longer than the server reads (1,024 characters); no id is that long.",
    remedy: "Check the URL; ids are at most 200 characters.",
  },
  {
    code: "expectation_failed",
    httpStatus: 417,
    meaning: "The request's `Expect` header asks for something other than `100-continue`.",
    remedy: "Remove the `Expect` header, or send `Expect: 100-continue`.",
  },
  {
    code: "request_headers_too_large",
    httpStatus: 431,
    meaning:
      "The request's headers are larger than the server reads (16 KiB in all, Node's limit); the connection is closed.",
    remedy: "Send smaller headers (cookies and long custom headers are the usual cause).",
  },
  {
    code: "authentication_rate_limited",
    httpStatus: 429,
    meaning:
      "This client address presented more unknown or revoked credentials than the failed-authentication limit allows; every request from it that needs a credential is refused until the window passes.",
    remedy:
      "Wait the number of seconds in the Retry-After header and check the API key or operator token; the limit is VERBATIM_FAILED_AUTH_LIMIT_PER_MINUTE on the server (docs/server/README.md).",
  },
  {
    code: "server_closing",
    httpStatus: 503,
    meaning:
      "The server is shutting down: it finishes the requests in flight and takes no new ones.",
    remedy: "Retry on another server or once this one is back.",
  },
  {
    code: "rate_limited",
    httpStatus: 429,
    meaning: "This API key sent more requests than its rate limit allows.",
    remedy:
      "Wait the number of seconds in the Retry-After header, or raise VERBATIM_RATE_LIMIT_PER_MINUTE on the server.",
  },
] as const satisfies readonly ErrorCodeDefinition[];

declare module "verbatim-llm/core" {
  interface ErrorCodeGroups {
    readonly server: typeof serverCodes;
  }
}

registerErrorCodes("server", serverCodes);

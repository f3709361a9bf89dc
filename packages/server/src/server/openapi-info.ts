/** The `info` block of docs/openapi.json. */
export const openApiInfo = {
  title: "verbatim server",
  version: "0.1.0",
  description:
    "Operator console routes (operator token), a stateful Responses-style API and job routes (per-subject API keys). Every error has the shape {error: {code, message, where, hint, request_id}} (docs/errors.md). See docs/server/README.md.",
};

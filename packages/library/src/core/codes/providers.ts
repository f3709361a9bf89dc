import { defineCodes } from "./define.js";

/** Error codes of src/providers and src/pricing. Add a code here, then run `npm run docs:generate`. */
export const providersCodes = defineCodes([
  {
    code: "provider_unknown",
    httpStatus: 400,
    meaning: "The provider named is not one verbatim speaks.",
    remedy: "Use one of anthropic, openai-chat, openai-responses, gemini, openrouter.",
  },
  {
    code: "provider_invalid_options",
    httpStatus: 400,
    meaning:
      "The render options are not usable: an empty model, a maxTokens that is not a positive integer (or none for Anthropic, which requires one), a tool without a name, or hosted tools for a wire format other than OpenAI Responses.",
    remedy: "Fix the option named in the message and render again.",
  },
  {
    code: "provider_extras_conflict",
    httpStatus: 400,
    meaning: "A provider extra names a field that the renderer writes itself.",
    remedy:
      "Remove that key from the extras; set it through the render option that owns it (docs/providers.md).",
  },
  {
    code: "provider_image_missing",
    httpStatus: 500,
    meaning: "An image block's bytes are not held, so the request cannot carry the image.",
    remedy:
      "Pass an image lookup that holds every image of the history (the archive reads missing images as imageOmitted).",
  },
  {
    code: "provider_invalid_history",
    httpStatus: 422,
    meaning:
      "The history holds a block a provider request cannot carry where it is (a tool call outside an assistant message, an image in an assistant message).",
    remedy: "Fix the history at the reported position; tool calls belong to assistant messages.",
  },
  {
    code: "provider_api_key_missing",
    httpStatus: 401,
    meaning: "No API key was given for the provider and its environment variable is not set.",
    remedy:
      "Pass apiKey, or set the provider's key variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY).",
  },
  {
    code: "provider_http_error",
    httpStatus: 502,
    meaning: "The provider answered with an HTTP error status (after any retries).",
    remedy: "Read the provider's message in the error; fix the request or try again later.",
  },
  {
    code: "provider_network_error",
    httpStatus: 502,
    meaning: "The provider could not be reached, or the connection broke (after any retries).",
    remedy: "Check the network and the base URL, then try again.",
  },
  {
    code: "provider_timeout",
    httpStatus: 504,
    meaning: "The provider sent nothing for longer than the timeout.",
    remedy: "Try again, or raise timeoutMs.",
  },
  {
    code: "provider_aborted",
    httpStatus: 499,
    meaning: "The request was cancelled by its AbortSignal.",
    remedy: "Nothing to fix: the caller cancelled the request.",
  },
  {
    code: "provider_response_invalid",
    httpStatus: 502,
    meaning:
      "The provider's response or stream is not in the shape its wire format promises, or the stream ended early.",
    remedy: "Try again; if it repeats, report the provider, the model and the response text.",
  },
  {
    code: "cache_prefix_unreadable",
    httpStatus: 400,
    meaning:
      "A request body given to the cache-prefix checker is not JSON, or not a body of a known provider.",
    remedy:
      "Pass two request bodies of one provider, as sent (e.g. the output of verbatim render).",
  },
]);

import { describe, expect, it } from "vitest";
import { NO_UPSTREAM } from "./config.js";
import { upstreamErrorSanitizer } from "./scrub.js";

describe("upstream error scrubbing", () => {
  const sanitizer = upstreamErrorSanitizer({
    ...NO_UPSTREAM,
    providers: {
      anthropic: {
        apiKey: "plain-configured-key-42",
        baseUrl: "http://llm-gateway.corp.internal:9000/anthropic",
      },
    },
  });
  const scrub = (text: string) => sanitizer.sanitizeText(text).value;

  it("removes URL credentials and keeps the rest of the URL", () => {
    expect(scrub("via https://bob:s3cret@proxy.example.com:8080/v1 failed")).toBe(
      "via https://[redacted:url_credentials]@proxy.example.com:8080/v1 failed",
    );
    expect(scrub("see https://example.com/a@b")).toBe("see https://example.com/a@b");
  });

  it("removes masked key fragments, configured keys and the configured upstream's location", () => {
    expect(scrub("Incorrect API key provided: sk-proj-*********abcd.")).toBe(
      "Incorrect API key provided: [redacted:api_key_fragment].",
    );
    expect(scrub("bad key plain-configured-key-42")).toBe("bad key [redacted:upstream_api_key]");
    expect(
      scrub(
        "connect ECONNREFUSED llm-gateway.corp.internal:9000 (http://llm-gateway.corp.internal:9000/anthropic/v1/messages)",
      ),
    ).toBe("connect ECONNREFUSED [upstream] ([upstream]/v1/messages)");
  });

  it("leaves ordinary error text alone", () => {
    const text = "anthropic answered HTTP 429: rate limited, retry in 3 s";
    expect(scrub(text)).toBe(text);
  });
});

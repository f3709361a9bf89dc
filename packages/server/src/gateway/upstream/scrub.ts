import { createSanitizer, type Sanitizer, type SecretRule } from "verbatim-llm/trajectory";
import type { UpstreamConfig } from "./config.js";

/**
 * Scrubs upstream error text before a caller sees it or it is stored (docs/server/responses.md, "What an
 * upstream error shows"): the trajectory sanitizer's rules (API keys, bearer tokens, JWTs, …),
 * plus credentials in URLs (`scheme://user:secret@host`), masked key fragments providers echo
 * (`sk-proj-****…abcd`), the configured provider keys themselves and the configured upstream
 * base URLs (internal host names stay inside the server).
 */
const urlCredentials: SecretRule = {
  name: "url_credentials",
  anchors: ["://"],
  pattern: /(?<=[A-Za-z][A-Za-z0-9+.-]*:\/\/)(?<secret>[^\s/?#@]+)@/g,
};

const keyFragment: SecretRule = {
  name: "api_key_fragment",
  anchors: ["*"],
  pattern: /(?<![A-Za-z0-9_-])(?:sk|vbk|key|api)[A-Za-z0-9_-]*\*{3,}[A-Za-z0-9_*-]*/g,
};

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A rule replacing each of the given texts exactly (longest first); none for no texts. */
function literalRule(name: string, texts: readonly string[]): SecretRule[] {
  const kept = [...new Set(texts.filter((text) => text.length >= 8))].sort(
    (a, b) => b.length - a.length,
  );
  if (kept.length === 0) return [];
  return [{ name, pattern: new RegExp(kept.map(escapeRegExp).join("|"), "g") }];
}

/** The configured base URLs and their hosts (with and without the port). */
function upstreamLocations(config: UpstreamConfig): string[] {
  const texts: string[] = [];
  for (const provider of Object.values(config.providers)) {
    if (provider?.baseUrl === undefined) continue;
    texts.push(provider.baseUrl.replace(/\/+$/, ""));
    try {
      const url = new URL(provider.baseUrl);
      texts.push(url.host, url.hostname);
    } catch {
      // Not a URL: the text alone is scrubbed.
    }
  }
  return texts;
}

/** The sanitizer upstream errors go through, for one upstream configuration. */
export function upstreamErrorSanitizer(config: UpstreamConfig): Sanitizer {
  const keys = Object.values(config.providers).flatMap((provider) =>
    provider === undefined ? [] : [provider.apiKey],
  );
  return createSanitizer({
    extraRules: [
      urlCredentials,
      keyFragment,
      ...literalRule("upstream_api_key", keys),
      ...literalRule("upstream_host", upstreamLocations(config)),
    ],
    replacement: (rule) =>
      rule.name === "upstream_host" ? "[upstream]" : `[redacted:${rule.name}]`,
  });
}

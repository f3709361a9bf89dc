/**
 * What a URL from stored content may become on the page (issue 31): a link only for `http:` and
 * `https:`, an image source only for a `data:image/…` URL; anything else (`javascript:`,
 * `vbscript:`, `data:text/html`, relative or unparsable) stays inert text.
 *
 * The scheme is read by the browser's own URL parser, so leading spaces and control characters,
 * tabs or newlines inside the scheme, and letter case are judged as the browser would follow them.
 */
export type UrlUse =
  | { readonly as: "link"; readonly href: string }
  | { readonly as: "image"; readonly src: string }
  | { readonly as: "text" };

const LINK_SCHEMES = new Set(["http:", "https:"]);

export function urlUse(url: string, purpose: "link" | "image"): UrlUse {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { as: "text" };
  }
  if (LINK_SCHEMES.has(parsed.protocol)) return { as: "link", href: parsed.href };
  // `pathname` of a data: URL is its media type and data; an image never runs script.
  if (purpose === "image" && parsed.protocol === "data:" && /^image\//i.test(parsed.pathname)) {
    return { as: "image", src: parsed.href };
  }
  return { as: "text" };
}

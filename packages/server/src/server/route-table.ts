/**
 * The methods each route path answers, so that a request for a known path with another method
 * gets 405 `method_not_allowed` with an `Allow` header instead of 404 (RFC 9110, 15.5.6).
 * Paths are Fastify's: `:name` matches one segment, a final `*` the rest.
 */
interface RoutePattern {
  readonly segments: readonly string[];
  readonly methods: Set<string>;
}

function segmentsOf(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  return trimmed.split("/");
}

function matches(pattern: readonly string[], path: readonly string[]): boolean {
  for (let index = 0; index < pattern.length; index++) {
    const part = pattern[index];
    if (part === "*" && index === pattern.length - 1) return path.length >= pattern.length;
    const given = path[index];
    if (given === undefined || part === undefined) return false;
    if (part.startsWith(":")) {
      if (given === "") return false;
    } else if (part !== given) {
      return false;
    }
  }
  return pattern.length === path.length;
}

export class RouteTable {
  readonly #patterns = new Map<string, RoutePattern>();

  add(methods: string | readonly string[], url: string): void {
    let pattern = this.#patterns.get(url);
    if (pattern === undefined) {
      pattern = { segments: segmentsOf(url), methods: new Set() };
      this.#patterns.set(url, pattern);
    }
    for (const method of typeof methods === "string" ? [methods] : methods) {
      pattern.methods.add(method.toUpperCase());
      if (method.toUpperCase() === "GET") pattern.methods.add("HEAD");
    }
  }

  /** The methods the path answers (sorted), or none when no route has the path. */
  allowedMethods(path: string): string[] {
    const segments = segmentsOf(path.split("?")[0] ?? "");
    const allowed = new Set<string>();
    for (const pattern of this.#patterns.values()) {
      if (matches(pattern.segments, segments)) {
        for (const method of pattern.methods) allowed.add(method);
      }
    }
    return [...allowed].sort();
  }
}

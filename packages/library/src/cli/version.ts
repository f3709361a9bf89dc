/**
 * The version of the installed package, read from its package.json (two folders up from this
 * file, in the sources as in the compiled dist/cli/). Read when asked, so that no other command
 * pays for it, with node:fs taken through getBuiltinModule (an ESM import of node:fs builds its
 * whole namespace, which `verbatim --help` would pay for).
 */
export function packageVersion(): string {
  const { readFileSync } = process.getBuiltinModule("node:fs");
  const text = readFileSync(new URL("../../package.json", import.meta.url), "utf8");
  const parsed: unknown = JSON.parse(text);
  const version =
    typeof parsed === "object" && parsed !== null && "version" in parsed
      ? parsed.version
      : undefined;
  if (typeof version !== "string") throw new Error("package.json has no version");
  return version;
}

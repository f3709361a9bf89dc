// Issue 16, "each layer owns its error codes": a code is registered in the group of the layer
// that raises it, defined in that layer's package (the library's in
// packages/library/src/core/codes/<layer>.ts, the server's in packages/server/src/<layer>/
// error-codes.ts), so docs/errors.md files it under that layer.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { errorCodeGroups } from "../../packages/library/src/core/error-codes.js";
import "../../packages/server/src/store/error-codes.js";
import "../../packages/server/src/gateway/error-codes.js";
import "../../packages/server/src/server/error-codes.js";

const packagesRoot = new URL("../../packages/", import.meta.url).pathname;
const serverLayers = new Set(["store", "gateway", "server"]);
/** The folder of a layer's sources: the server package holds store, gateway and server. */
const layerFolder = (layer: string): string =>
  join(packagesRoot, serverLayers.has(layer) ? "server" : "library", "src", layer);
/** The file that defines a layer's codes. */
const codesFile = (layer: string): string =>
  serverLayers.has(layer)
    ? join(layerFolder(layer), "error-codes.ts")
    : join(packagesRoot, "library", "src", "core", "codes", `${layer}.ts`);

/** The source text of a layer, tests and its codes file left out. */
function layerSource(layer: string): string {
  const files: string[] = [];
  const walk = (folder: string): void => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith(".ts") && !path.endsWith(".test.ts") && path !== codesFile(layer)) {
        files.push(path);
      }
    }
  };
  walk(layerFolder(layer));
  return files.map((path) => readFileSync(path, "utf8")).join("\n");
}

describe("error codes are owned by the layer that raises them (issue 16)", () => {
  it("registers the library's layers (one file each in core/codes), then the server package's", () => {
    const libraryLayers = readdirSync(join(packagesRoot, "library", "src", "core", "codes"))
      .map((name) => name.replace(/\.ts$/, ""))
      .filter((name) => name !== "define");
    const groups = [...errorCodeGroups().keys()];
    expect(groups.slice(0, -3).sort()).toEqual(libraryLayers.sort());
    expect(groups.slice(-3)).toEqual(["store", "gateway", "server"]);
  });

  for (const [layer, codes] of errorCodeGroups()) {
    it(`the ${layer} group is defined in its own package's file and raised by that layer`, () => {
      const file = codesFile(layer);
      expect(existsSync(file), file).toBe(true);
      const definitions = readFileSync(file, "utf8");
      for (const { code } of codes) expect(definitions).toContain(`code: "${code}"`);
      if (layer === "general") return;
      const source = layerSource(layer);
      const unused = codes
        .map((definition) => definition.code)
        .filter((code) => !source.includes(`"${code}"`));
      expect(unused).toEqual([]);
    });
  }

  it("keeps no server layer's codes in the library", () => {
    const libraryCodes = readdirSync(join(packagesRoot, "library", "src", "core", "codes"));
    expect(libraryCodes.filter((name) => serverLayers.has(name.replace(/\.ts$/, "")))).toEqual([]);
  });
});

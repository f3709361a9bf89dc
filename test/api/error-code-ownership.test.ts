// Issue 16, "each layer owns its error codes": a code is registered in the group of the layer
// that raises it (src/core/codes/<layer>.ts), so docs/errors.md files it under that layer.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ErrorCodeDefinition } from "../../packages/library/src/core/codes/define.js";
import { errorCodeGroups } from "../../packages/library/src/core/error-codes.js";

const packagesRoot = new URL("../../packages/", import.meta.url).pathname;
const serverLayers = new Set(["store", "gateway", "server"]);
/** The folder of a layer's sources: the server package holds store, gateway and server. */
const layerFolder = (layer: string): string =>
  join(packagesRoot, serverLayers.has(layer) ? "server" : "library", "src", layer);

/** The source text of a layer, tests left out. */
function layerSource(layer: string): string {
  const files: string[] = [];
  const walk = (folder: string): void => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith(".ts") && !path.endsWith(".test.ts")) files.push(path);
    }
  };
  walk(layerFolder(layer));
  return files.map((path) => readFileSync(path, "utf8")).join("\n");
}

describe("error codes are owned by the layer that raises them (issue 16)", () => {
  for (const [layer, codes] of Object.entries(errorCodeGroups)) {
    if (layer === "general") continue;
    it(`every code of the ${layer} group is used in src/${layer}`, () => {
      const source = layerSource(layer);
      const unused = (codes as readonly ErrorCodeDefinition[])
        .map((definition) => definition.code)
        .filter((code) => !source.includes(`"${code}"`));
      expect(unused).toEqual([]);
    });
  }
});

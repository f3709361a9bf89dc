import { build } from "esbuild";
import { join } from "node:path";

/**
 * Bundles the crash child (the archive's sources, zod included) into one JavaScript file, so
 * each child process starts with bare `node` in a fraction of the time a TypeScript loader
 * needs: the crash test starts hundreds of them. esbuild is the bundler tsx itself runs on.
 */
export async function compileForChildren(root: string, outDir: string): Promise<string> {
  const outfile = join(outDir, "crash-child.mjs");
  await build({
    entryPoints: [join(root, "test/archive/crash/child.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    minify: true,
    outfile,
    logLevel: "warning",
  });
  return outfile;
}

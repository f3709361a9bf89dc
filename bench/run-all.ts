// Runs every benchmark (bench/<name>/run.ts), or the ones named: `npm run bench -- archive store`.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const wanted = process.argv.slice(2);
const names = readdirSync(new URL(".", import.meta.url), { withFileTypes: true })
  .filter(
    (entry) =>
      entry.isDirectory() && existsSync(new URL(`./${entry.name}/run.ts`, import.meta.url)),
  )
  .map((entry) => entry.name)
  .filter((name) => wanted.length === 0 || wanted.includes(name))
  .sort();
let failed = 0;
for (const name of names) {
  process.stdout.write(`\n=== bench/${name}\n`);
  const result = spawnSync(process.execPath, ["bin/run-ts.js", `bench/${name}/run.ts`], {
    cwd: root,
    stdio: "inherit",
  });
  if (result.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);

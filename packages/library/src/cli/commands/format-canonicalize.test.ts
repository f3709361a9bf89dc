import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { bufferIO } from "../io.js";
import { main } from "../main.js";

const root = fileURLToPath(new URL("../../../../../", import.meta.url));
const fixtures = "test/fixtures/format-1/";
const canonicalSeed = readFileSync(`${root}${fixtures}seed-example.canonical.json`);

async function run(args: string[]) {
  const io = bufferIO({ cwd: root });
  const code = await main(args, io);
  return { code, out: io.out(), err: io.err() };
}

describe("verbatim format canonicalize (in process)", () => {
  it("A2 A12 writes the seed example's canonical bytes to stdout and exits 0", async () => {
    const result = await run(["format", "canonicalize", `${fixtures}seed-example.json`]);
    expect(result.code).toBe(0);
    expect(result.err).toBe("");
    expect(result.out.equals(canonicalSeed)).toBe(true);
  });

  it("A2 canonical input comes out byte for byte the same", async () => {
    const name = `${fixtures}valid/every-item-type.json`;
    const result = await run(["format", "canonicalize", name]);
    expect(result.code).toBe(0);
    expect(result.out.equals(readFileSync(`${root}${name}`))).toBe(true);
  });

  it("A14 exits 1 with the reason and the JSON path on stderr for an unreadable file", async () => {
    const result = await run(["format", "canonicalize", `${fixtures}bad/unknown-block-type.json`]);
    expect(result.code).toBe(1);
    expect(result.out.length).toBe(0);
    expect(result.err).toBe(
      `${fixtures}bad/unknown-block-type.json: unreadable: $.history[3].content[1].type: Invalid discriminator value. Expected 'text' | 'image' | 'imageOmitted' | 'toolCall' | 'toolResult'\n`,
    );
  });

  it("A14 exits 1 for a newer format version, naming both versions", async () => {
    const result = await run(["format", "canonicalize", `${fixtures}bad/newer-version.json`]);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/format 2, newer than format 1/);
  });

  it("exits 2 for a missing path", async () => {
    const result = await run(["format", "canonicalize", "no/such/conversation.json"]);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(
      /^verbatim format canonicalize: cannot read no\/such\/conversation.json: ENOENT/,
    );
    expect(result.err).not.toMatch(/\n\s+at /);
  });

  it("exits 2 for bad usage: no argument, two arguments, an unknown flag", async () => {
    for (const args of [[], ["a.json", "b.json"], ["--pretty", "a.json"]]) {
      const result = await run(["format", "canonicalize", ...args]);
      expect(result.code).toBe(2);
      expect(result.err).toMatch(/Usage: verbatim format canonicalize <conversation.json>/);
      expect(result.out.length).toBe(0);
    }
  });

  it("prints its usage with --help and exits 0", async () => {
    const result = await run(["format", "canonicalize", "--help"]);
    expect(result.code).toBe(0);
    expect(result.out.toString()).toMatch(
      /^Usage: verbatim format canonicalize <conversation.json>/,
    );
  });
});

describe("verbatim format canonicalize (node bin/verbatim.js in a child process)", () => {
  const exec = promisify(execFile);
  async function spawn(args: string[]) {
    try {
      const { stdout, stderr } = await exec(process.execPath, ["bin/verbatim.js", ...args], {
        cwd: root,
        encoding: "buffer",
      });
      return { code: 0, out: stdout, err: stderr.toString() };
    } catch (error) {
      const failed = error as { code: number; stdout: Buffer; stderr: Buffer };
      return { code: failed.code, out: failed.stdout, err: failed.stderr.toString() };
    }
  }

  it(
    "A2 A12 writes the canonical bytes of the seed example and exits 0",
    { timeout: 120_000 },
    async () => {
      const result = await spawn(["format", "canonicalize", `${fixtures}seed-example.json`]);
      expect(result.err).toBe("");
      expect(result.code).toBe(0);
      expect(result.out.equals(canonicalSeed)).toBe(true);
    },
  );

  // Each child process starts Node and loads the command line from the TypeScript sources:
  // slow on a loaded machine, hence the generous timeouts.
  it(
    "A14 exits 1 with the reason on stderr for an unreadable file",
    { timeout: 120_000 },
    async () => {
      const bad = await spawn(["format", "canonicalize", `${fixtures}bad/duplicate-key.json`]);
      expect(bad.code).toBe(1);
      expect(bad.out.length).toBe(0);
      expect(bad.err).toMatch(
        /unreadable: not valid JSON at line \d+, column 3 \(\$\): the key "model" appears twice/,
      );
    },
  );

  it("exits 2 for a missing path and for bad usage", { timeout: 120_000 }, async () => {
    const missing = await spawn(["format", "canonicalize", "missing.json"]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/cannot read missing.json/);
    const usage = await spawn(["format", "canonicalize"]);
    expect(usage.code).toBe(2);
    expect(usage.err).toMatch(/Usage: verbatim format canonicalize/);
  });
});

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, runCli } from "./run-cli.js";

const version = (
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }
).version;

// Child processes start through tsx: allow for a loaded machine.
describe(
  "verbatim --help, --version and the command groups (real child processes)",
  { timeout: 120_000 },
  () => {
    it("--version and -v print the package's version, exit 0", async () => {
      for (const flag of ["--version", "-v"]) {
        const run = await runCli([flag]);
        expect(run.code).toBe(0);
        expect(run.stdout).toBe(`${version}\n`);
        expect(run.stderr).toBe("");
      }
    });

    it("a group alone prints the group's commands and their usage, exit 0 (was: unknown command)", async () => {
      const groups: Record<string, string[]> = {
        keys: ["keys create", "keys revoke"],
        archive: ["archive show", "archive check", "archive resave"],
        db: ["db migrate"],
        format: ["format canonicalize"],
        trajectory: ["trajectory project"],
      };
      for (const [group, commands] of Object.entries(groups)) {
        const run = await runCli([group]);
        expect(run.code, group).toBe(0);
        expect(run.stdout).toContain(`Usage: verbatim ${group} <command>`);
        for (const command of commands) expect(run.stdout).toContain(`verbatim ${command} `);
        expect((await runCli([group, "--help"])).stdout).toBe(run.stdout);
      }
    });

    it("an unknown command of a group names the group's commands, exit 2", async () => {
      const run = await runCli(["keys", "rotate"]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('unknown command "keys rotate"');
      expect(run.stderr).toContain("keys create, keys revoke");
    });

    it("--help lists every command without loading any of them (no zod, fastify, kysely, pg)", async () => {
      const run = await runCli(["--help"], { recordPackages: true });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("keys revoke");
      expect(run.stdout).toContain("--version");
      for (const heavy of ["zod", "fastify", "kysely", "pg", "better-sqlite3", "pino"]) {
        expect(run.packages).not.toContain(heavy);
      }
    });

    it("a command's --help is printed from the table: serve --help loads no server", async () => {
      const run = await runCli(["serve", "--help"], { recordPackages: true });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("Usage: verbatim serve ");
      expect(run.packages).not.toContain("fastify");
      expect(run.packages).not.toContain("kysely");
    });

    it("archive check of a valid package loads no zod and no server; zod is loaded only to explain an unreadable one", async () => {
      const run = await runCli(["archive", "check", "test/fixtures/packages/Poster.silverpoint"], {
        recordPackages: true,
      });
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(
        "test/fixtures/packages/Poster.silverpoint: readable, format 1, 5 history messages\n",
      );
      for (const heavy of ["zod", "fastify", "kysely", "pg", "better-sqlite3", "pino"]) {
        expect(run.packages).not.toContain(heavy);
      }

      const folder = mkdtempSync(join(tmpdir(), "verbatim-check-"));
      try {
        mkdirSync(join(folder, "agent"));
        writeFileSync(
          join(folder, "agent", "conversation.json"),
          '{"formatVersion":1,"items":[{"id":"a","type":"user"}]}',
        );
        const unreadable = await runCli(["archive", "check", folder], { recordPackages: true });
        expect(unreadable.code).toBe(1);
        expect(unreadable.stderr).toBe(
          `verbatim archive check: ${folder}: unreadable: agent/conversation.json cannot be read: $.items[0].text: missing; expected string\n`,
        );
        expect(unreadable.packages).toContain("zod");
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    });
  },
);

import { describe, expect, it } from "vitest";
import { freshDatabase, postgresUrl, testDialects } from "../support/databases.js";
import { runCli } from "./run-cli.js";

// Defect: `verbatim keys revoke` of a key revoked before printed "revoked the API key" as if it
// had just been revoked. It says the key was already revoked, and when; exit 0 (the key is
// revoked either way) and `already_revoked` in --json.
describe(
  "keys revoke of an already revoked key (real child processes)",
  { timeout: 180_000 },
  () => {
    for (const dialect of testDialects) {
      it.skipIf(dialect === "postgres" && postgresUrl === undefined)(
        `says so, keeps the first revocation time, exit 0 [${dialect}]`,
        async () => {
          const fresh = await freshDatabase(dialect);
          try {
            const db = fresh.locationText;
            const created = await runCli([
              "keys",
              "create",
              "--db",
              db,
              "--subject",
              "user-9",
              "--json",
            ]);
            expect(created.code).toBe(0);
            const key = (JSON.parse(created.stdout) as { key: string }).key;

            const first = await runCli(["keys", "revoke", key, "--db", db, "--json"]);
            expect(first.code).toBe(0);
            const revoked = JSON.parse(first.stdout) as Record<string, unknown>;
            expect(revoked).toMatchObject({ subject_uid: "user-9", already_revoked: false });

            const again = await runCli(["keys", "revoke", key, "--db", db, "--json"]);
            expect(again.code).toBe(0);
            expect(JSON.parse(again.stdout)).toEqual({
              revoked_at: revoked["revoked_at"],
              subject_uid: "user-9",
              already_revoked: true,
            });

            const text = await runCli(["keys", "revoke", key, "--db", db]);
            expect(text.code).toBe(0);
            expect(text.stdout).toBe(
              `the API key of subject user-9 was already revoked at ${String(revoked["revoked_at"])}; nothing changed\n`,
            );
          } finally {
            await fresh.cleanup();
          }
        },
      );
    }
  },
);

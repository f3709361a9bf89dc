import { sql } from "kysely";
import { expect, it } from "vitest";
import { describeEachDialect } from "../../../../test/support/databases.js";
import { listenForChanges } from "./notifications.js";

const waitFor = async (check: () => boolean) => {
  const deadline = performance.now() + 2_000;
  while (!check()) {
    if (performance.now() > deadline) throw new Error("not within 2 s");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describeEachDialect("change notifications", (getDatabase, dialect) => {
  it("B14 PostgreSQL delivers a committed NOTIFY to the listener; SQLite has none", async () => {
    const changes: string[] = [];
    let resets = 0;
    const listener = await listenForChanges(getDatabase(), "verbatim_test_changes", {
      onChange: (payload) => changes.push(payload),
      onReset: () => resets++,
    });
    if (dialect === "sqlite") {
      expect(listener).toBeUndefined();
      return;
    }
    try {
      expect(listener?.listening).toBe(true);
      expect(resets).toBe(1);
      await sql`select pg_notify('verbatim_test_changes', 'first')`.execute(getDatabase().db);
      await sql`select pg_notify('verbatim_other_channel', 'not ours')`.execute(getDatabase().db);
      await sql`select pg_notify('verbatim_test_changes', 'second')`.execute(getDatabase().db);
      await waitFor(() => changes.length === 2);
      expect(changes).toEqual(["first", "second"]);
    } finally {
      await listener?.close();
    }
    expect(listener?.listening).toBe(false);
  });

  it("B14 a listener that cannot connect says so, keeps trying, and stops when closed", async () => {
    const errors: Error[] = [];
    if (dialect === "sqlite") {
      // SQLite never listens, so it never fails to.
      const none = await listenForChanges(getDatabase(), "verbatim_test_changes", {
        onChange: () => undefined,
        onReset: () => undefined,
        onError: (error) => errors.push(error),
      });
      expect(none).toBeUndefined();
      expect(errors).toEqual([]);
      return;
    }
    const unreachable = {
      ...getDatabase(),
      location: { dialect: "postgres" as const, url: "postgres://nobody@127.0.0.1:1/none" },
    };
    const listener = await listenForChanges(unreachable, "verbatim_test_changes", {
      onChange: () => undefined,
      onReset: () => undefined,
      onError: (error) => errors.push(error),
    });
    expect(listener?.listening).toBe(false);
    await waitFor(() => errors.length >= 3);
    await listener?.close();
    const after = errors.length;
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(errors.length).toBe(after);
    expect(listener?.listening).toBe(false);
  });

  it("B14 a channel name that is not an identifier is refused on PostgreSQL", async () => {
    const listening = listenForChanges(getDatabase(), "bad; drop table x", {
      onChange: () => undefined,
      onReset: () => undefined,
    });
    if (dialect === "sqlite") await expect(listening).resolves.toBeUndefined();
    else await expect(listening).rejects.toThrow("not a channel name");
  });
});

import { describe, expect, it } from "vitest";
import { commandEntries } from "./index.js";

describe("the command table", () => {
  it("names each command by the words of the command it loads, once", async () => {
    const seen = new Set<string>();
    for (const entry of commandEntries) {
      const command = await entry.load();
      expect(command.words).toEqual(entry.words);
      const name = entry.words.join(" ");
      expect(seen.has(name)).toBe(false);
      seen.add(name);
    }
  });
});

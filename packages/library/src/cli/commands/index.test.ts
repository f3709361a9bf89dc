import { describe, expect, it } from "vitest";
import { commandEntries } from "./index.js";

describe("the command table", () => {
  it("names each command by the words, usage and summary of the command it loads, once", async () => {
    const seen = new Set<string>();
    for (const entry of commandEntries) {
      const command = await entry.load();
      expect(command.words).toEqual(entry.words);
      expect(command.usage).toBe(entry.usage);
      expect(command.summary).toBe(entry.summary);
      const name = entry.words.join(" ");
      expect(seen.has(name)).toBe(false);
      seen.add(name);
    }
  });
});

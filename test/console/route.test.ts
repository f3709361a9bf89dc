/**
 * The console's addresses (web/src/route.ts, issue 20): every route formats to an address that
 * parses back to it; unknown views fall back to stored; a malformed escape names nothing
 * rather than throwing; the token is never part of an address.
 */
import { describe, expect, it } from "vitest";
import { formatRoute, parseRoute, type Route } from "../../web/src/route.js";

const parse = (address: string) => {
  const url = new URL(address, "http://127.0.0.1");
  return parseRoute({ pathname: url.pathname, search: url.search });
};

describe("console addresses", () => {
  it("B14 each route formats to an address that parses back to it", () => {
    const routes: Route[] = [
      { section: "conversations", view: "stored" },
      { section: "conversations", id: "conv_1", view: "chatml" },
      {
        section: "conversations",
        id: "conv_1",
        target: "msg_2",
        view: "model-visible",
        anchor: "msg_9",
      },
      { section: "jobs", id: "job_1", target: "agent:patch/1 ü", view: "stored" },
      {
        section: "jobs",
        view: "stored",
        subject: "user-4",
        status: "failed",
        from: "2026-01-01",
        to: "2026-02-01",
      },
      { section: "conversations", view: "stored", model: "gpt-5", q: "東京の天気 🌞 100%&x=y" },
    ];
    for (const route of routes) {
      const address = formatRoute(route);
      const back = parse(address);
      for (const [key, value] of Object.entries(route)) {
        expect(back[key as keyof Route], `${address} ${key}`).toBe(value);
      }
    }
  });

  it("B14 the addresses the issue names", () => {
    expect(formatRoute({ section: "conversations", id: "c", target: "m", view: "stored" })).toBe(
      "/conversations/c/messages/m",
    );
    expect(formatRoute({ section: "jobs", id: "j", target: "k", view: "chatml" })).toBe(
      "/jobs/j/items/k?view=chatml",
    );
    expect(formatRoute({ section: "jobs", id: "j", view: "stored", anchor: "a" })).toBe("/jobs/j");
  });

  it("B14 an unknown view is stored, a malformed escape names nothing, / is the conversations", () => {
    expect(parse("/conversations/c?view=raw").view).toBe("stored");
    expect(parse("/conversations/%E0%A4%A").id).toBeUndefined();
    expect(parse("/")).toMatchObject({ section: "conversations", id: undefined });
    expect(parse("/jobs/j/messages/x").target).toBeUndefined();
  });

  it("B14 the token is never part of an address", () => {
    const address = formatRoute({
      ...parse("/conversations/c?token=vop_secret&view=chatml"),
      view: "chatml",
    });
    expect(address).not.toContain("vop_secret");
  });
});

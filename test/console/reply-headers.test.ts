/**
 * The console's reply headers (issue 31, item 5): every console route (each operation of the
 * OpenAPI document under the operator token) answers `Cache-Control: no-store` and `nosniff`,
 * on success and on refusal, an image with its exact stored type; every address of the page and
 * its files answers with the Content-Security-Policy, `Referrer-Policy: no-referrer` and
 * `nosniff`, built or not.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import { PAGE_CONTENT_SECURITY_POLICY } from "../../packages/server/src/server/console/reply-headers.js";
import { PAGE_PATHS } from "../../packages/server/src/server/routes/web.js";
import { freshDatabase, uniqueName, type FreshDatabase } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";
import { seedImages } from "./seed-images.js";

interface Operation {
  readonly security?: Record<string, unknown>[];
  readonly parameters?: {
    readonly name: string;
    readonly in: string;
    readonly required?: boolean;
  }[];
}
type Operations = Record<string, Record<string, Operation>>;

describe("console reply headers", () => {
  let fresh: FreshDatabase;
  let server: TestServer;
  let values: Record<string, string>;
  let folder: string;
  beforeAll(async () => {
    fresh = await freshDatabase("sqlite");
    const subject = uniqueName("subject");
    const images = await seedImages(fresh.database, subject);
    const jobs = new BackgroundAgentJobs(fresh.database);
    const job = await jobs.createJob(subject, {
      conversationId: images.conversationId,
      retryBudget: 0,
    });
    values = {
      conversation: images.conversationId,
      job: job.id,
      messageId: images.messageId,
      block: "1",
      q: "picture",
    };
    folder = mkdtempSync(join(tmpdir(), "verbatim-web-"));
    mkdirSync(join(folder, "assets"));
    writeFileSync(join(folder, "index.html"), "<!doctype html><title>page</title>");
    writeFileSync(join(folder, "assets", "page.js"), "export {};");
    server = await testServer(fresh.database, { webRoot: folder });
  });
  afterAll(async () => {
    await server?.app.close();
    await fresh?.cleanup();
    rmSync(folder, { recursive: true, force: true });
  });

  /** An OpenAPI path with its parameters filled by the seeded conversation, job and image. */
  const address = (path: string) =>
    path.replace(/\{(\w+)\}/g, (_whole, name: string) => {
      const key =
        name !== "id" ? name : path.startsWith("/background-agent-jobs") ? "job" : "conversation";
      return values[key] ?? `no value for {${name}}`;
    });

  it("issue 31 B14 every console route answers Cache-Control: no-store and nosniff, with or without the token", async () => {
    const paths = (server.app.swagger() as unknown as { paths: Operations }).paths;
    const routes = Object.entries(paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => operation.security?.some((one) => "operatorToken" in one))
        .map(([method, operation]) => {
          // Required query parameters (the search's `q`) are filled like path parameters.
          const query = (operation.parameters ?? [])
            .filter((one) => one.in === "query" && one.required === true)
            .map((one) => `${one.name}=${values[one.name] ?? ""}`);
          const url = address(path) + (query.length === 0 ? "" : `?${query.join("&")}`);
          return { method: method.toUpperCase(), url };
        }),
    );
    // The table holds the console's routes, the image route among them.
    expect(routes.length).toBeGreaterThanOrEqual(7);
    expect(routes.some((route) => route.url.endsWith("/blocks/1/image"))).toBe(true);
    for (const route of routes) {
      const method = route.method as "GET";
      const answered = await server.app.inject({
        method,
        url: route.url,
        headers: server.operator,
      });
      const refused = await server.app.inject({ method, url: route.url });
      // Past the token check into the route (the cache report is 404: no recorded calls here).
      expect([200, 404], `${route.method} ${route.url}`).toContain(answered.statusCode);
      expect(refused.statusCode, `${route.method} ${route.url}`).toBe(401);
      for (const reply of [answered, refused]) {
        expect(reply.headers["cache-control"], `${route.method} ${route.url}`).toBe("no-store");
        expect(reply.headers["x-content-type-options"], `${route.method} ${route.url}`).toBe(
          "nosniff",
        );
      }
      if (route.url.endsWith("/image")) {
        expect(answered.statusCode).toBe(200);
        expect(answered.headers["content-type"]).toBe("image/png");
      }
    }
  });

  const pageHeaders = (headers: Record<string, unknown>, where: string) => {
    const policy = String(headers["content-security-policy"]);
    expect(policy, where).toContain("frame-ancestors 'none'");
    expect(policy, where).not.toMatch(/script-src[^;]*'unsafe-/);
    expect(headers["referrer-policy"], where).toBe("no-referrer");
    expect(headers["x-content-type-options"], where).toBe("nosniff");
  };

  it("issue 31 B14 every address of the page and its files answers with the CSP, no-referrer and nosniff", async () => {
    const urls = [...PAGE_PATHS.map((path) => path.replace("*", "some-id")), "/assets/page.js"];
    for (const url of urls) {
      const reply = await server.app.inject({ method: "GET", url });
      expect(reply.statusCode, url).toBe(200);
      expect(reply.headers["content-security-policy"], url).toBe(PAGE_CONTENT_SECURITY_POLICY);
      pageHeaders(reply.headers, url);
    }
    expect(PAGE_CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    const missing = await testServer(fresh.database, { webRoot: { missing: "not built here" } });
    try {
      for (const path of PAGE_PATHS) {
        const url = path.replace("*", "some-id");
        const reply = await missing.app.inject({ method: "GET", url });
        expect(reply.statusCode, url).toBe(503);
        pageHeaders(reply.headers, `${url} (not built)`);
        expect(String(reply.headers["content-security-policy"])).toContain("default-src 'none'");
      }
    } finally {
      await missing.app.close();
    }
  });
});

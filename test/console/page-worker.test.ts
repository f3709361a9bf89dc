/**
 * Issue 20: the console's message and job pages are built in a worker thread with its own
 * read-only connection to the store, so that building a large page never blocks the event loop.
 * On a SQLite file and on PostgreSQL: the worker's pages are the event loop's, byte for byte,
 * in every view and with the page size limit; its errors are the same replies; it sees what the
 * main thread committed; a worker that dies is replaced and its page retried; it is used where
 * it should be (and not where it cannot be: in-memory SQLite); it ends on close.
 */
import { Worker } from "node:worker_threads";
import { afterAll, beforeAll, expect, it } from "vitest";
import { httpStatusOf, isVerbatimError } from "verbatim-llm/core";
import "../../packages/server/src/server/errors.js";
import { PageWorker } from "../../packages/server/src/gateway/console/worker/host.js";
import { openConsolePages } from "../../packages/server/src/gateway/console/worker/pages.js";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { openDatabase } from "../../packages/server/src/store/database.js";
import { migrateDatabase } from "../../packages/server/src/store/migrate.js";
import { openReadOnlyDatabase } from "../../packages/server/src/store/read-only-database.js";
import { describeEachDialect, uniqueName } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";
import { seedConsole, type Seeded } from "./seed.js";

const VIEWS = ["stored", "chatml", "model-visible"] as const;

describeEachDialect("console pages in the worker thread", (getDatabase) => {
  let seeded: Seeded;
  let inWorker: TestServer;
  let onEventLoop: TestServer;
  beforeAll(async () => {
    seeded = await seedConsole(getDatabase(), uniqueName("subject"));
    inWorker = await testServer(getDatabase());
    onEventLoop = await testServer(getDatabase(), { consoleWorker: false });
  });
  afterAll(async () => {
    await inWorker.app.close();
    await onEventLoop.app.close();
  });

  const both = async (url: string) => {
    const [worker, loop] = await Promise.all(
      [inWorker, onEventLoop].map((server) =>
        server.app.inject({
          method: "GET",
          url,
          // One request id for both: error bodies carry it.
          headers: { ...server.operator, "x-request-id": "page-worker-test" },
        }),
      ),
    );
    return { worker: worker!, loop: loop! };
  };

  it("issue 20: message and job pages are the event loop's, byte for byte, in every view and cut to the page limit", async () => {
    expect(inWorker.app.consolePages.builtIn).toBe("worker");
    expect(onEventLoop.app.consolePages.builtIn).toBe("event loop");
    const { weather, long, job } = seeded;
    const urls = VIEWS.flatMap((view) => [
      `/ai-gateway/conversations/${weather.id}/messages?view=${view}`,
      `/ai-gateway/conversations/${weather.id}/messages?view=${view}&anchor=${weather.answer}`,
      `/ai-gateway/conversations/${long.id}/messages?view=${view}&limit=1000`,
      `/ai-gateway/conversations/${long.id}/messages?view=${view}&limit=7&cursor=${Buffer.from("o:5").toString("base64url")}`,
      `/ai-gateway/conversations/${weather.id}/messages?view=${view}&page_limit_bytes=1024`,
      `/background-agent-jobs/${job.id}?view=${view}`,
      `/background-agent-jobs/${job.id}?view=${view}&page_limit_bytes=1024`,
    ]);
    const built = inWorker.app.consolePages.worker!.stats.answered;
    for (const url of urls) {
      const { worker, loop } = await both(url);
      expect(worker.statusCode, url).toBe(loop.statusCode);
      expect(worker.headers["content-type"], url).toBe(loop.headers["content-type"]);
      expect(worker.body, url).toBe(loop.body);
    }
    // Every one of these pages came from the thread (none silently built on the event loop).
    expect(inWorker.app.consolePages.worker!.stats.answered - built).toBe(urls.length);
    // A page cut to the limit: the same cut.
    for (const view of VIEWS) {
      const url = `/ai-gateway/conversations/${long.id}/messages?view=${view}&limit=1000`;
      const whole = (await both(url)).loop.json() as { messages: unknown[]; metadata: unknown };
      const size = Buffer.byteLength(
        JSON.stringify({ messages: whole.messages, metadata: whole.metadata }),
      );
      const cut = await both(`${url}&page_limit_bytes=${Math.max(1024, size - 100)}`);
      expect(cut.worker.statusCode, view).toBe(200);
      expect(cut.worker.json(), view).toMatchObject({ metadata: { content_truncated: true } });
      expect(cut.worker.body, view).toBe(cut.loop.body);
    }
  });

  it("issue 20: errors raised in the worker are the same replies (status, code, where, hint)", async () => {
    const { weather, long, job } = seeded;
    const urls = [
      `/ai-gateway/conversations/${weather.id}/messages?anchor=${long.last}`,
      `/ai-gateway/conversations/${weather.id}/messages?anchor=msg_missing`,
      `/ai-gateway/conversations/${long.id}/messages?view=chatml&page_limit_bytes=1024&limit=1000`,
      `/background-agent-jobs/${job.id}?view=chatml&page_limit_bytes=1024`,
    ];
    const statuses: number[] = [];
    for (const url of urls) {
      const { worker, loop } = await both(url);
      const strip = (body: unknown) => ({
        error: { ...(body as { error: object }).error, request_id: undefined },
      });
      expect(worker.statusCode, url).toBe(loop.statusCode);
      expect(strip(worker.json()), url).toEqual(strip(loop.json()));
      statuses.push(worker.statusCode);
    }
    expect(statuses.slice(0, 3)).toEqual([404, 404, 400]);
  });

  it("issue 20: the worker sees what the main thread committed since its last page", async () => {
    const subject = uniqueName("subject");
    const store = new GatewayMessageStore(getDatabase());
    const [first] = await store.appendMessages(subject, {
      previousMessageId: null,
      messages: [{ role: "user", content: [{ type: "text", text: "one" }] }],
    });
    const url = `/ai-gateway/conversations/${first?.conversationId}/messages`;
    const read = async () =>
      (
        (await inWorker.app.inject({ method: "GET", url, headers: inWorker.operator })).json() as {
          messages: unknown[];
        }
      ).messages.length;
    expect(await read()).toBe(1);
    await store.appendMessages(subject, {
      previousMessageId: first?.id ?? null,
      messages: [{ role: "assistant", content: [{ type: "text", text: "two" }] }],
    });
    expect(await read()).toBe(2);
  });

  it("issue 20: a worker that dies is replaced: the page in flight is built again, the next one too", async () => {
    const pages = inWorker.app.consolePages;
    const worker = pages.worker!;
    const url = `/ai-gateway/conversations/${seeded.long.id}/messages?view=model-visible&limit=1000`;
    const expected = (
      await onEventLoop.app.inject({ method: "GET", url, headers: onEventLoop.operator })
    ).body;
    const started = worker.stats.started;
    const retried = worker.stats.retried;
    // Stopped while a page is in flight: it goes to a new thread. The page may be answered
    // before the thread stops, so this is tried until one was given to a new thread.
    for (let attempt = 0; attempt < 10 && worker.stats.retried === retried; attempt++) {
      let answered = false;
      const inFlight = inWorker.app
        .inject({ method: "GET", url, headers: inWorker.operator })
        .finally(() => (answered = true));
      // In flight, or answered already (then the next attempt tries again; a busy machine may
      // take long to get there).
      await expect
        .poll(() => worker.inFlight > 0 || answered, { interval: 1, timeout: 10_000 })
        .toBe(true);
      await worker.stopThread();
      const reply = await inFlight;
      expect(reply.statusCode).toBe(200);
      expect(reply.body).toBe(expected);
    }
    expect(worker.stats.retried).toBe(retried + 1);
    expect(worker.stats.started).toBeGreaterThan(started);
    const startedBefore = worker.stats.started;
    await worker.stopThread();
    const next = await inWorker.app.inject({ method: "GET", url, headers: inWorker.operator });
    expect(next.body).toBe(expected);
    expect(worker.stats.started).toBe(startedBefore + 1);
  });

  it("issue 20: the worker's connection cannot write", async () => {
    const readOnly = await openReadOnlyDatabase(getDatabase().location);
    try {
      const store = new GatewayMessageStore(readOnly);
      await expect(
        store.appendMessages(uniqueName("subject"), {
          previousMessageId: null,
          messages: [{ role: "user", content: [{ type: "text", text: "no" }] }],
        }),
      ).rejects.toThrow(/read.?only|readonly/i);
    } finally {
      await readOnly.close();
    }
  });

  it("issue 20: the thread ends when the server closes (no handle left)", async () => {
    const server = await testServer(getDatabase());
    const reply = await server.app.inject({
      method: "GET",
      url: `/background-agent-jobs/${seeded.job.id}`,
      headers: server.operator,
    });
    expect(reply.statusCode).toBe(200);
    const worker = server.app.consolePages.worker!;
    expect(worker.running).toBe(true);
    await server.app.close();
    expect(worker.running).toBe(false);
    expect(worker.stats.answered).toBe(1);
  });
});

it("issue 20: an in-memory SQLite store, or one without a location, keeps building pages on the event loop", async () => {
  const database = await openDatabase({ dialect: "sqlite", path: ":memory:" });
  await migrateDatabase(database);
  const seeded = await seedConsole(database, uniqueName("subject"));
  const server = await testServer(database);
  try {
    expect(server.app.consolePages.builtIn).toBe("event loop");
    // A store object without a location (a JavaScript embedder's) cannot be opened again either.
    const { location: _location, ...withoutLocation } = database;
    const embedded = openConsolePages(
      withoutLocation as unknown as typeof database,
      new GatewayMessageStore(database),
      { cacheBytes: 0 },
    );
    expect(embedded.builtIn).toBe("event loop");
    const reply = await server.app.inject({
      method: "GET",
      url: `/ai-gateway/conversations/${seeded.weather.id}/messages?view=model-visible`,
      headers: server.operator,
    });
    expect(reply.statusCode).toBe(200);
  } finally {
    await server.app.close();
    await database.close();
  }
});

it("issue 20: a page whose thread dies twice fails with 503 console_worker_failed, never hangs", async () => {
  const worker = new PageWorker(
    {
      location: { dialect: "sqlite", path: "unused.sqlite" },
      preparedStatements: true,
      cacheBytes: 0,
    },
    // A thread that dies at once, every time.
    { spawn: () => new Worker("process.exit(3)", { eval: true }) },
  );
  const failure = await worker
    .build({
      kind: "job",
      request: { jobId: "job_x", owner: "subject", view: "stored", pageLimitBytes: 1024 },
    })
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  expect(isVerbatimError(failure) && failure.code).toBe("console_worker_failed");
  expect(httpStatusOf("console_worker_failed")).toBe(503);
  expect(worker.stats).toMatchObject({ started: 2, retried: 1, answered: 0 });
  await worker.close();
  expect(worker.running).toBe(false);
});

it("issue 20: a page the thread never finishes fails with 503 console_page_timeout; the stuck thread is stopped and close() does not wait for it", async () => {
  const lost: unknown[] = [];
  const worker = new PageWorker(
    {
      location: { dialect: "sqlite", path: "unused.sqlite" },
      preparedStatements: true,
      cacheBytes: 0,
    },
    {
      // A thread that takes every page and never answers.
      spawn: () => new Worker("setInterval(() => undefined, 1000)", { eval: true }),
      pageTimeoutMs: 200,
      onLost: (error) => lost.push(error),
    },
  );
  const job = {
    kind: "job",
    request: { jobId: "job_stuck", owner: "subject", view: "stored", pageLimitBytes: 1024 },
  } as const;
  const started = Date.now();
  const failure = await worker.build(job).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  expect(isVerbatimError(failure) && failure.code).toBe("console_page_timeout");
  expect(httpStatusOf("console_page_timeout")).toBe(503);
  expect(worker.stats).toMatchObject({ started: 1, timedOut: 1, answered: 0, retried: 0 });
  // The log names the page that got stuck.
  expect(String(lost[0])).toContain("job_stuck");
  await expect.poll(() => worker.running, { timeout: 10_000 }).toBe(false);
  const closing = Date.now();
  await worker.close();
  expect(Date.now() - closing).toBeLessThan(1000);
});

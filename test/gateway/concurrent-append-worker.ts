// One process of the concurrency test (concurrent-appends.test.ts): opens the store named on
// the command line, prints "ready", waits for "go" on stdin, then appends as told and prints
// the ids it got as one JSON line.
import { createInterface } from "node:readline";
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { openDatabase } from "../../packages/server/src/store/database.js";
import { parseDatabaseLocation } from "../../packages/server/src/store/location.js";

const [locationText, subject, worker, sharedRoot, countText] = process.argv.slice(2);
if (locationText === undefined || subject === undefined || worker === undefined) {
  throw new Error("usage: worker <db> <subject> <worker> <sharedRoot> <count>");
}
const count = Number(countText);
const database = await openDatabase(parseDatabaseLocation(locationText), { poolSize: 2 });
const store = new GatewayMessageStore(database);
const say = (text: string) => ({
  role: "user" as const,
  content: [{ type: "text" as const, text }],
});

process.stdout.write("ready\n");
const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line === "go") break;

const own: string[] = [];
const shared: string[] = [];
const forks: string[] = [];
const keyed: string[] = [];
let ownPrevious: string | null = null;
let sharedPrevious = sharedRoot ?? "";
for (let index = 0; index < count; index++) {
  // a chain in this worker's own conversation
  const [ownMessage] = await store.appendMessages(subject, {
    previousMessageId: ownPrevious,
    messages: [say(`${worker} own ${index}`)],
  });
  ownPrevious = ownMessage?.id ?? "";
  own.push(ownPrevious);
  // a chain of this worker in the shared conversation, started at the shared root
  const [sharedMessage] = await store.appendMessages(subject, {
    previousMessageId: sharedPrevious,
    messages: [say(`${worker} shared ${index}`)],
  });
  sharedPrevious = sharedMessage?.id ?? "";
  shared.push(sharedPrevious);
  // every worker continues the same anchor at once: forks
  const [fork] = await store.appendMessages(subject, {
    previousMessageId: sharedRoot ?? "",
    messages: [say(`${worker} fork ${index}`)],
  });
  forks.push(fork?.id ?? "");
  // the same idempotent write from every worker: one message
  const [once] = await store.appendMessages(subject, {
    previousMessageId: sharedRoot ?? "",
    messages: [say(`keyed ${index}`)],
    idempotencyKey: `keyed-${index}`,
  });
  keyed.push(once?.id ?? "");
}
process.stdout.write(JSON.stringify({ own, shared, forks, keyed }) + "\n");
await database.close();

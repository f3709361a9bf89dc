// One process of the job concurrency test (concurrent-job-appends.test.ts): opens the store
// named on the command line, prints "ready", waits for "go" on stdin, then appends to the shared
// turn (own keys, and keys every worker shares) and prints the rows it got as one JSON line.
import { createInterface } from "node:readline";
import { BackgroundAgentJobs } from "../../packages/server/src/gateway/jobs/job-service.js";
import { openDatabase } from "../../packages/server/src/store/database.js";
import { parseDatabaseLocation } from "../../packages/server/src/store/location.js";

const [locationText, subject, worker, turnId, countText] = process.argv.slice(2);
if (
  locationText === undefined ||
  subject === undefined ||
  worker === undefined ||
  turnId === undefined
) {
  throw new Error("usage: worker <db> <subject> <worker> <turnId> <count>");
}
const count = Number(countText);
const database = await openDatabase(parseDatabaseLocation(locationText), { poolSize: 2 });
const jobs = new BackgroundAgentJobs(database);

process.stdout.write("ready\n");
const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line === "go") break;

const own: [string, number][] = [];
const shared: [string, number][] = [];
for (let index = 0; index < count; index++) {
  const rows = await jobs.appendItems(subject, turnId, [
    {
      item_key: `${worker}-${index}-a`,
      item: { type: "agent_message", text: `${worker} ${index} a` },
    },
    {
      item_key: `${worker}-${index}-b`,
      item: { type: "agent_message", text: `${worker} ${index} b` },
    },
  ]);
  for (const row of rows) own.push([row.item_key, row.position]);
  const [same] = await jobs.appendItems(subject, turnId, [
    { item_key: `shared-${index}`, item: { type: "agent_message", text: `shared ${index}` } },
  ]);
  shared.push([same?.item_key ?? "", same?.position ?? -1]);
}
process.stdout.write(JSON.stringify({ own, shared }) + "\n");
await database.close();

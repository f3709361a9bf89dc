/**
 * A bulk import that dies: opens the SQLite store at argv[2], defers its search index, appends
 * one message holding the text argv[3], and exits without finishing the deferral (as a killed
 * import would). Run by search-deferral.test.ts with `node bin/run-ts.js`.
 */
import { GatewayMessageStore } from "../../packages/server/src/gateway/conversations/message-store.js";
import { openDatabase } from "../../packages/server/src/store/database.js";
import { deferSearchIndex } from "../../packages/server/src/store/search-deferral.js";

const [path = "", text = ""] = process.argv.slice(2);
const database = await openDatabase({ dialect: "sqlite", path }, { poolSize: 1 });
await deferSearchIndex(database);
await new GatewayMessageStore(database).appendMessages("crashed-import", {
  previousMessageId: null,
  messages: [{ role: "user", content: [{ type: "text", text }] }],
});
process.exit(0);

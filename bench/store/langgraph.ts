// The LangGraph.js checkpointers as the baseline of bench/store: the same conversation stored
// turn by turn the way a LangGraph graph with a `messages` channel stores it: each turn reads
// the thread's latest checkpoint (getTuple) and writes a new one whose `messages` channel holds
// the whole conversation so far (put).
import BetterSqlite3 from "better-sqlite3";
import { emptyCheckpoint, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import type { Message } from "../../packages/library/src/history/message.js";

export interface Checkpointer {
  readonly name: string;
  /** Stores one more turn; returns nothing. */
  storeTurn(turn: number, messagesSoFar: readonly Message[]): Promise<void>;
  close(): Promise<void>;
}

function wrap(
  name: string,
  saver: SqliteSaver | PostgresSaver,
  close: () => Promise<void>,
): Checkpointer {
  const threadId = `thread-${Date.now()}`;
  return {
    name,
    async storeTurn(turn, messagesSoFar) {
      const config = { configurable: { thread_id: threadId, checkpoint_ns: "" } };
      const latest = await saver.getTuple(config);
      const checkpoint: Checkpoint = {
        ...emptyCheckpoint(),
        id: uuid6(turn),
        ts: new Date().toISOString(),
        channel_values: { messages: messagesSoFar },
        channel_versions: { messages: turn + 1 },
        versions_seen: { agent: { messages: turn } },
      };
      await saver.put(
        latest?.config ?? config,
        checkpoint,
        { source: "loop", step: turn, parents: {} },
        { messages: turn + 1 },
      );
    },
    close,
  };
}

/** SqliteSaver on a file, with the same durability as the store (WAL, synchronous=FULL). */
export function sqliteCheckpointer(path: string): Checkpointer {
  const db = new BetterSqlite3(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  const saver = new SqliteSaver(db);
  return wrap("LangGraph SqliteSaver", saver, async () => {
    db.close();
  });
}

/** PostgresSaver in its own schema of the database. */
export async function postgresCheckpointer(url: string, schema: string): Promise<Checkpointer> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const saver = new PostgresSaver(pool, undefined, { schema });
  await saver.setup();
  return wrap("LangGraph PostgresSaver", saver, async () => {
    await pool.query(`drop schema if exists "${schema}" cascade`);
    await pool.end();
  });
}

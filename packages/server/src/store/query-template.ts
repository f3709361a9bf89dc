import {
  CompiledQuery,
  type Compilable,
  type Kysely,
  type QueryResult,
  type RawBuilder,
} from "kysely";
import { nameStatement } from "./prepared-statements.js";
import type { StoreSchema } from "./schema.js";

/**
 * A query written once with Kysely, compiled once per database and then run with new values.
 *
 * Building a query with Kysely's builder and compiling it costs more than running it on a
 * small row (bench/store/query-template.ts: one durable UPDATE after the process sat idle 20 ms,
 * 0.59–0.78 ms with the builder, 0.38–0.52 ms as a template, 0.37–0.48 ms for the driver alone).
 * The statements every request runs (an API key's lookup, an anchor's lookup, a finish) are
 * therefore built with placeholders: `slot(i)` stands for the i-th value of `run`. The compiled
 * SQL is kept for the database's dialect and its parameters are filled in for each run, so
 * the query stays the one Kysely wrote for that dialect. A database with Kysely plugins (tests
 * recording statements) compiles every run, so its plugins see every query.
 *
 * On PostgreSQL a template runs as a named prepared statement (src/store/prepared-statements.ts):
 * parsed and planned once per connection instead of at every run. `prepared: false` is for
 * templates made for rare shapes that are not kept.
 */
export interface QueryTemplate<Values extends readonly unknown[], Row> {
  run(db: Kysely<StoreSchema>, ...values: Values): Promise<QueryResult<Row>>;
}

const SLOT_PREFIX = "\u0000verbatim-query-slot:";

/** What a compiled template knows: its SQL, and where each parameter's value comes from. */
interface Compiled {
  readonly sql: string;
  /** Per parameter: the index of the value it takes, or the constant the template holds. */
  readonly sources: readonly ({ readonly slot: number } | { readonly constant: unknown })[];
  readonly slotCount: number;
}

/**
 * `build` writes the query; each value that changes between runs is `slot(index)` (typed as
 * whatever the builder expects there). Every slot from 0 to `values.length - 1` must be used.
 */
export function queryTemplate<Values extends readonly unknown[], Row>(
  build: (
    db: Kysely<StoreSchema>,
    slot: (index: number) => never,
  ) => Compilable<Row> | RawBuilder<Row>,
  options: { readonly prepared?: boolean } = {},
): QueryTemplate<Values, Row> {
  // One compilation per dialect adapter: a transaction shares its database's adapter.
  const compiledFor = new WeakMap<object, Compiled>();
  const compile = (db: Kysely<StoreSchema>): Compiled => {
    const built = build(db, (index) => `${SLOT_PREFIX}${index}` as never);
    // Raw SQL compiles against the database; builders know theirs.
    const query = "isRawBuilder" in built ? built.compile(db) : built.compile();
    if (query.sql.includes(SLOT_PREFIX)) {
      throw new Error(`a query template inlined a slot into its SQL: ${query.sql}`);
    }
    const used = new Set<number>();
    const sources = query.parameters.map((parameter) => {
      if (typeof parameter === "string" && parameter.startsWith(SLOT_PREFIX)) {
        const slot = Number(parameter.slice(SLOT_PREFIX.length));
        used.add(slot);
        return { slot };
      }
      return { constant: parameter };
    });
    for (let index = 0; index < used.size; index++) {
      if (!used.has(index)) throw new Error(`a query template does not use slot ${index}`);
    }
    if (options.prepared !== false) nameStatement(query.sql);
    return { sql: query.sql, sources, slotCount: used.size };
  };
  return {
    async run(db, ...values) {
      const executor = db.getExecutor();
      let compiled: Compiled | undefined;
      if (executor.plugins.length > 0) {
        // Plugins may change the SQL and a database's plugins can differ from its adapter's
        // other users: compile for this run alone.
        compiled = compile(db);
      } else {
        compiled = compiledFor.get(executor.adapter);
        if (compiled === undefined) {
          compiled = compile(db);
          compiledFor.set(executor.adapter, compiled);
        }
      }
      if (values.length !== compiled.slotCount) {
        throw new Error(`a query template of ${compiled.slotCount} values got ${values.length}`);
      }
      const parameters = compiled.sources.map((source) =>
        "slot" in source ? values[source.slot] : source.constant,
      );
      return (await db.executeQuery(
        CompiledQuery.raw(compiled.sql, parameters),
      )) as QueryResult<Row>;
    },
  };
}

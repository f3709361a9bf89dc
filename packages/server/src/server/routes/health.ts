import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { VerbatimError } from "verbatim-llm/core";
import type { StoreDatabase } from "../../store/index.js";
import { pingDatabase } from "../../store/repositories/health.js";
import { errorReplySchema } from "../errors.js";

const healthReplySchema = z.object({
  status: z.literal("ok"),
  database: z.enum(["sqlite", "postgres"]),
});

/** GET /healthz: 200 without auth while the (migrated) database answers, else 503. */
export function registerHealthRoutes(app: FastifyInstance, database: StoreDatabase): void {
  app.get(
    "/healthz",
    {
      schema: {
        summary: "Liveness and database check (no auth)",
        tags: ["health"],
        response: { 200: healthReplySchema, 503: errorReplySchema },
      },
    },
    async () => {
      try {
        await pingDatabase(database.db);
      } catch (error) {
        throw new VerbatimError("store_unreachable", "the database does not answer", {
          cause: error,
          hint: "Check the database the server was started on",
        });
      }
      return { status: "ok" as const, database: database.capabilities.dialect };
    },
  );
}

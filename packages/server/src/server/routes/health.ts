import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { Health } from "../../gateway/maintenance/health.js";
import { errorReplySchema } from "../errors.js";

const healthReplySchema = z.object({
  status: z.literal("ok"),
  database: z.enum(["sqlite", "postgres"]),
});

/** GET /healthz: 200 without auth while the (migrated) database answers, else 503. */
export function registerHealthRoutes(app: FastifyInstance, health: () => Promise<Health>): void {
  app.get(
    "/healthz",
    {
      schema: {
        summary: "Liveness and database check (no auth)",
        tags: ["health"],
        response: { 200: healthReplySchema, 503: errorReplySchema },
      },
    },
    async () => health(),
  );
}

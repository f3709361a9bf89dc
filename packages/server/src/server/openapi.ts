import { openDatabase } from "../store/database.js";
import { buildServer } from "./app.js";

/**
 * The server's OpenAPI 3.1 document (docs/openapi.json), generated from the zod schemas the
 * routes validate with, so the document cannot disagree with what the server checks.
 */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  const database = await openDatabase({ dialect: "sqlite", path: ":memory:" });
  try {
    const app = await buildServer({ database, operatorToken: "unused", webRoot: false });
    await app.ready();
    const document = app.swagger() as unknown as Record<string, unknown>;
    await app.close();
    return document;
  } finally {
    await database.close();
  }
}

export async function openApiJson(): Promise<string> {
  return JSON.stringify(await openApiDocument(), null, 2) + "\n";
}

/**
 * Regression (issue 15, the stored-text rule on the console): the console's `subject_uid`
 * filter is no id (`…_id`) and was sent to the database as it came, so on PostgreSQL a NUL in
 * it answered 500 (SQLite: an empty list). A subject that breaks the stored-text rule names no
 * subject: both databases answer 400 `invalid_request` naming the field, before any query.
 * (A lone surrogate cannot arrive in a URL: percent-decoding gives U+FFFD.) B14.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachDialect } from "../support/databases.js";
import { testServer, type TestServer } from "../support/server.js";

describeEachDialect("console subject filter with NUL", (getDatabase) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await testServer(getDatabase());
  });
  afterAll(async () => {
    await server.app.close();
  });

  it("B14 a NUL in subject_uid is 400 on both databases, on both lists", async () => {
    for (const route of ["/ai-gateway/conversations", "/background-agent-jobs"]) {
      for (const subject of ["%00", "a%00b"]) {
        const reply = await server.app.inject({
          method: "GET",
          url: `${route}?subject_uid=${subject}`,
          headers: server.operator,
        });
        expect({ route, subject, status: reply.statusCode }).toEqual({
          route,
          subject,
          status: 400,
        });
        expect(reply.json().error).toMatchObject({
          code: "invalid_request",
          where: "querystring.subject_uid",
        });
      }
    }
  });
});

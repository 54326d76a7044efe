/**
 * One 2025-11-25 session served by two gateways on one PostgreSQL database (src/mcp/sessions.ts:
 * the session and its SSE events are rows of the store): a session opened on one instance is used
 * on the other, a streamed `tools/call` dropped on one is resumed with Last-Event-ID on the other,
 * and ending the session on one ends it on both.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { README_ARGS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { answers, initializeSession, readEvents, sessionRequest } from "../support/mcp-sessions.ts";
import { postgresUnavailable, startTestPostgres, type TestPostgres } from "../support/postgres.ts";

describe.skipIf(postgresUnavailable !== undefined)("a 2025-11-25 session across two instances", () => {
  let server: TestPostgres;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    server = await startTestPostgres();
    const url = await server.createDatabase("writ_mcp_sessions");
    let identity: unknown;
    const configure = (document: Record<string, unknown>) => {
      // Both trust the first one's identity provider: one caller, one token, either instance.
      identity ??= document.identity;
      return {
        ...document,
        identity,
        store: { postgres: { url } },
        mcp: { ...z.record(z.string(), z.unknown()).parse(document.mcp), sessions: { enabled: true } },
      };
    };
    a = await startTestGateway({ configure });
    b = await startTestGateway({ configure });
  }, 180_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await server?.stop();
  });

  it("is served by either instance, resumed on the other, and ended for both", async () => {
    const alice = await a.token("alice");
    const session = await initializeSession(a.url, alice);
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    expect((await sessionRequest(b.url, alice, session, list)).status).toBe(200);

    const call = {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "repo_read", arguments: README_ARGS },
    };
    const [priming] = await readEvents(await sessionRequest(a.url, alice, session, call), () => true);
    const resumed = await sessionRequest(b.url, alice, session, undefined, {
      headers: { "last-event-id": priming?.id ?? "" },
    });
    const events = await readEvents(resumed, (event) => answers(event, 2));
    expect(events.at(-1)?.message).toMatchObject({ id: 2, result: { content: [{ type: "text" }] } });

    expect((await sessionRequest(b.url, alice, session, undefined, { method: "DELETE" })).status).toBe(200);
    expect((await sessionRequest(a.url, alice, session, list)).status).toBe(404);
  }, 30_000);
});

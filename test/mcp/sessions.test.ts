/**
 * Sessions for 2025-11-25 clients (`mcp.sessions.enabled`, src/mcp/sessions.ts) on one gateway
 * fronting a 2025-11-25 upstream with a subscribable resource (mcp-notes-board.ts): a real v1
 * `Client` gets a session, subscribes, hears the resource's updates on its GET stream, and ends
 * the session; raw HTTP checks the wire: a session is usable only with its own subject's token,
 * an ended one is 404, a resource the caller may not read cannot be subscribed, and a streamed
 * `tools/call` dropped after its priming event is resumed with Last-Event-ID. Streams are
 * polled (`poll_after_ms: 0`): the v1 client's call is answered on the stream it resumes.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { README_ARGS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway, waitForMcpServers } from "../support/gateway.ts";
import {
  BOARD_CONTRACT,
  BOARD_URI,
  type NotesBoardServer,
  startNotesBoardServer,
} from "../support/mcp-notes-board.ts";
import { answers, initializeSession, readEvents, sessionRequest } from "../support/mcp-sessions.ts";

const POLICY = `package writ

import rego.v1

default decision := {"decision": "deny", "reasons": [{"code": "no_rule_allows", "message": "no policy rule allows this action", "visible_to_model": true}]}

decision := {"decision": "allow", "reasons": [], "grant": {"ttl_seconds": 60, "max_uses": 1}} if {
	input.subject.id == "erin"
	input.action.name in {"notes.board", "repo.read"}
}
`;

const errorSchema = z.object({
  error: z.object({ code: z.number(), data: z.record(z.string(), z.unknown()) }),
});

let dir: string;
let upstream: NotesBoardServer;
let gw: TestGateway;
let erin: string;
let client: Client | undefined;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "writ-mcp-sessions-"));
  await mkdir(path.join(dir, "writ"));
  await writeFile(path.join(dir, "writ", "decision.rego"), POLICY);
  upstream = await startNotesBoardServer();
  gw = await startTestGateway({
    configure: (document) => ({
      ...document,
      tools: [...(Array.isArray(document.tools) ? document.tools : []), BOARD_CONTRACT],
      mcp: {
        servers: [{ name: "notes", transport: "http", url: upstream.url, protocol_version: "2025-11-25" }],
        // Polling: a session's call stream is closed right after its priming event, and resumed.
        sessions: { enabled: true, retry_ms: 200, poll_after_ms: 0 },
      },
      policy: { ...(typeof document.policy === "object" ? document.policy : {}), dir },
    }),
  });
  await waitForMcpServers(gw);
  erin = await gw.token("erin");
}, 60_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await gw?.close();
  await upstream?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("2025-11-25 sessions", () => {
  it("gives a v1 client a session whose GET stream relays the updates of what it subscribed, until it ends", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${erin}` } },
    });
    client = new Client({ name: "sessions-test", version: "1.0.0" });
    await client.connect(transport);
    const session = transport.sessionId;
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(client.getServerCapabilities()?.resources).toEqual({ listChanged: true, subscribe: true });
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) => {
      updated.push(params.uri);
    });

    await client.subscribeResource({ uri: BOARD_URI });
    await expect
      .poll(() => upstream.methods, { timeout: 10_000, interval: 50 })
      .toEqual([{ method: "resources/subscribe", uri: BOARD_URI }]);
    await upstream.updateBoard();
    await expect.poll(() => updated, { timeout: 10_000, interval: 50 }).toEqual([BOARD_URI]);
    await client.unsubscribeResource({ uri: BOARD_URI });
    await expect
      .poll(() => upstream.methods.map((m) => m.method), { timeout: 10_000, interval: 50 })
      .toEqual(["resources/subscribe", "resources/unsubscribe"]);

    // Its stream closed after the priming event, the call's answer comes on the resumed stream.
    const read = await client.callTool({ name: "repo_read", arguments: README_ARGS });
    expect(read.isError).toBeFalsy();
    expect(read.content).toEqual([expect.objectContaining({ type: "text" })]);

    await transport.terminateSession();
    const after = await sessionRequest(gw.url, erin, session, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
    });
    expect(after.status).toBe(404);
    expect(errorSchema.parse(await after.json()).error.data).toMatchObject({ category: "not_found" });
  }, 30_000);

  it("serves a session only with a token of the subject that opened it", async () => {
    const session = await initializeSession(gw.url, erin);
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    expect((await sessionRequest(gw.url, erin, session, list)).status).toBe(200);

    const other = await sessionRequest(gw.url, await gw.token("mallory"), session, list);
    expect(other.status).toBe(403);
    expect(errorSchema.parse(await other.json()).error.data).toMatchObject({ category: "forbidden" });
    const stream = await sessionRequest(gw.url, await gw.token("mallory"), session);
    expect(stream.status).toBe(403);
    await stream.body?.cancel();

    const unknown = await sessionRequest(gw.url, erin, "no-such-session", list);
    expect(unknown.status).toBe(404);
    // Without the header the endpoint stays stateless.
    expect((await sessionRequest(gw.url, erin, undefined, list)).status).toBe(200);
  });

  it("refuses a subscription to a resource the caller may not read", async () => {
    const mallory = await gw.token("mallory");
    const session = await initializeSession(gw.url, mallory);
    const answer = await sessionRequest(gw.url, mallory, session, {
      jsonrpc: "2.0",
      id: 2,
      method: "resources/subscribe",
      params: { uri: BOARD_URI },
    });
    const refused = errorSchema.parse(await answer.json());
    expect(refused.error.code).toBe(-32602);
    expect(refused.error.data).toMatchObject({ error: { category: "policy_denied" } });
  });

  it("resumes a streamed tools/call dropped after its priming event with Last-Event-ID", async () => {
    const session = await initializeSession(gw.url, erin);
    const call = {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "repo_read", arguments: README_ARGS },
    };
    const posted = await sessionRequest(gw.url, erin, session, call);
    expect(posted.headers.get("content-type")).toContain("text/event-stream");
    // The client goes away right after the priming event (an id, a retry, no data).
    const [priming] = await readEvents(posted, () => true);
    expect(priming).toMatchObject({ retry: 200, message: undefined });
    expect(priming?.id).toMatch(/^\d+$/);

    const resumed = await sessionRequest(gw.url, erin, session, undefined, {
      headers: { "last-event-id": priming?.id ?? "" },
    });
    expect(resumed.status).toBe(200);
    const events = await readEvents(resumed, (event) => answers(event, 7));
    const answer = z
      .object({ result: z.object({ content: z.array(z.object({ type: z.string() })) }) })
      .parse(events.at(-1)?.message);
    expect(answer.result.content[0]?.type).toBe("text");

    const stale = await sessionRequest(gw.url, erin, session, undefined, {
      headers: { "last-event-id": "x" },
    });
    expect(stale.status).toBe(400);
  });
});

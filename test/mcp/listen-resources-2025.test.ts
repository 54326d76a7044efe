/**
 * Resource updates on `subscriptions/listen` (2026-07-28) from a 2025-11-25 upstream: Writ
 * subscribes with `resources/subscribe` while a caller who may read `notes://board` listens for
 * it, relays the server's `notifications/resources/updated`, and unsubscribes when the stream
 * closes. The caller is a real v2 `Client`; the upstream the v1 SDK's server (mcp-notes-board.ts).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway, waitForMcpServers } from "../support/gateway.ts";
import {
  BOARD_CONTRACT,
  BOARD_URI,
  type NotesBoardServer,
  startNotesBoardServer,
} from "../support/mcp-notes-board.ts";
import { connectModernMcp } from "../support/mcp-v2-client.ts";

const POLICY = `package writ

import rego.v1

default decision := {"decision": "deny", "reasons": [{"code": "no_rule_allows", "message": "no policy rule allows this action", "visible_to_model": true}]}

decision := {"decision": "allow", "reasons": [], "grant": {"ttl_seconds": 60, "max_uses": 1}} if {
	"editor" in input.subject.roles
	input.action.name == "notes.board"
}
`;

let dir: string;
let upstream: NotesBoardServer;
let gw: TestGateway;
let client: Client | undefined;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "writ-listen-resources-2025-"));
  await mkdir(path.join(dir, "writ"));
  await writeFile(path.join(dir, "writ", "decision.rego"), POLICY);
  upstream = await startNotesBoardServer();
  gw = await startTestGateway({
    configure: (document) => ({
      ...document,
      tools: [BOARD_CONTRACT],
      limits: [],
      history: [],
      mcp: {
        servers: [{ name: "notes", transport: "http", url: upstream.url, protocol_version: "2025-11-25" }],
      },
      policy: { ...(typeof document.policy === "object" ? document.policy : {}), dir },
    }),
  });
  await waitForMcpServers(gw);
}, 60_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await gw?.close();
  await upstream?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("subscriptions/listen: resource updates from a 2025-11-25 upstream", () => {
  it("subscribes upstream while a caller who may read the resource listens, relays its updates, and unsubscribes after", async () => {
    client = await connectModernMcp(gw.url, await gw.token("erin", { roles: ["editor"] }));
    const updated: string[] = [];
    client.setNotificationHandler("notifications/resources/updated", ({ params }) => {
      updated.push(params.uri);
    });
    const listen = await client.listen({ resourceSubscriptions: [BOARD_URI] });
    await expect
      .poll(() => upstream.methods, { timeout: 10_000, interval: 50 })
      .toEqual([{ method: "resources/subscribe", uri: BOARD_URI }]);
    await upstream.updateBoard();
    await expect.poll(() => updated, { timeout: 10_000, interval: 50 }).toEqual([BOARD_URI]);
    await listen.close();
    await expect
      .poll(() => upstream.methods.map((m) => m.method), { timeout: 10_000, interval: 50 })
      .toEqual(["resources/subscribe", "resources/unsubscribe"]);
  }, 30_000);
});

/**
 * Which protocol revision Writ speaks to an upstream MCP server, as the v2 client negotiates it:
 * 2026-07-28 to a server that offers it (a `server/discover` probe, then no `initialize`, and the
 * `_meta` envelope on every request), the 2025 `initialize` handshake to one that does not. Each
 * upstream's negotiated revision is in /healthz. Served: a v2 server (`createMcpHandler`, both
 * revisions) and the v1 notes server (2025 only), both over Streamable HTTP on loopback.
 */
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { NOTES_CONTRACTS, notesPolicyDir, withNotes } from "../../mcp/notes-fixture.ts";
import { startTestGateway, type TestGateway, waitFor } from "../../support/gateway.ts";
import { lateGrantKeys } from "../../support/late-grant-keys.ts";
import { type NotesHttpServer, startNotesHttpServer } from "../../support/mcp-notes-http.ts";
import { startV2Upstream, type V2Upstream } from "../../support/mcp-v2-upstream.ts";

const statusSchema = z.object({
  mcp_servers: z.array(
    z.object({
      name: z.string(),
      connected: z.boolean(),
      tools: z.number(),
      protocol_version: z.string().optional(),
    }),
  ),
});

const answerSchema = z.object({
  results: z.tuple([
    z.object({
      decision: z.string(),
      error: z.unknown().optional(),
      result: z.object({ structured_content: z.unknown() }).optional(),
    }),
  ]),
});

let policyDir: string;
let modern: V2Upstream;
/** A v2 server the configuration pins to 2025-11-25 (`protocol_version`): no probe. */
let pinnedLegacy: V2Upstream;
let legacy: NotesHttpServer;
let gw: TestGateway;

beforeAll(async () => {
  policyDir = await notesPolicyDir();
  const { keys, bind } = lateGrantKeys();
  modern = await startV2Upstream(keys);
  pinnedLegacy = await startV2Upstream(keys);
  legacy = await startNotesHttpServer(keys);
  const notes = withNotes({ transport: "http", url: modern.url }, policyDir);
  gw = await startTestGateway({
    configure: (document) => {
      const configured = notes(document);
      return {
        ...configured,
        mcp: {
          servers: [
            { name: "notes", transport: "http", url: modern.url },
            { name: "legacy", transport: "http", url: legacy.url },
            { name: "pinned", transport: "http", url: pinnedLegacy.url, protocol_version: "2025-11-25" },
            // A 2025-only server pinned to 2026-07-28: a connect error, never a silent fallback.
            { name: "mispinned", transport: "http", url: legacy.url, protocol_version: "2026-07-28" },
          ],
        },
      };
    },
  });
  bind(gw.jwksUrl);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await modern?.close();
  await pinnedLegacy?.close();
  await legacy?.close();
  await rm(policyDir, { recursive: true, force: true });
});

async function servers() {
  return statusSchema.parse((await gw.request("GET", "/healthz")).json).mcp_servers;
}

async function readNote(id: string, headers: Record<string, string> = {}) {
  const answer = await gw.request("POST", "/v1/proposals", {
    token: await gw.token("vera", { roles: ["viewer"] }),
    headers,
    body: { format: "canonical", execute: true, payload: { tool: "notes.read", arguments: { id } } },
  });
  expect(answer.status, answer.text).toBe(200);
  return answerSchema.parse(answer.json).results[0];
}

describe("upstream protocol revisions", () => {
  it("speaks 2026-07-28 to a server that offers it, 2025-11-25 to one that does not, and says which in /healthz", async () => {
    expect(await servers()).toEqual([
      { name: "notes", connected: true, tools: 3, protocol_version: "2026-07-28" },
      { name: "legacy", connected: true, tools: 4, protocol_version: "2025-11-25" },
      { name: "pinned", connected: true, tools: 3, protocol_version: "2025-11-25" },
      { name: "mispinned", connected: false, tools: 0 },
    ]);
  });

  it("speaks the revision a server's protocol_version pins, without a probe", () => {
    const methods = pinnedLegacy.methods.map((m) => m.method);
    expect(methods[0]).toBe("initialize");
    expect(methods).not.toContain("server/discover");
  });

  it("probes the modern server with server/discover and never sends it initialize", () => {
    const methods = modern.methods.map((m) => m.method);
    expect(methods[0]).toBe("server/discover");
    expect(methods).not.toContain("initialize");
    expect(methods).toContain("tools/list");
    // Every request after the probe names the negotiated revision in its header.
    for (const m of modern.methods.slice(1)) expect(m.protocolVersion).toBe("2026-07-28");
  });

  it("runs a call on the modern server in its revision, with the grant it verifies in _meta", async () => {
    const before = modern.calls.length;
    const outcome = await readNote("n1");
    expect(outcome.error).toBeUndefined();
    expect(outcome.decision).toBe("allow");
    expect(outcome.result?.structured_content).toEqual({ id: "n1", text: "buy milk" });
    const calls = modern.calls.slice(before);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ tool: "read_note", revision: "2026-07-28", granted: true });
    expect(calls[0]?.meta["writ/grant"]).toEqual(expect.any(String));
  });

  it("re-lists the modern server's tools when it says its list changed (subscriptions/listen)", async () => {
    expect(NOTES_CONTRACTS.map((c) => c.name)).toContain("notes.archive");
    await modern.addArchiveTool();
    await waitFor(
      "the gateway to list archive_note",
      async () => ((await servers()).find((s) => s.name === "notes")?.tools === 3 ? true : undefined),
      10_000,
      100,
    );
    expect(modern.methods.map((m) => m.method)).toContain("subscriptions/listen");
  });
});

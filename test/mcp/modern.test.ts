/**
 * The 2026-07-28 revision on Writ's /mcp, beside 2025-11-25: the v2 SDK's client (pinned to
 * 2026-07-28: `server/discover`, then every request with its `_meta` envelope) and raw requests
 * against the default configuration's demo tools. The same handlers answer both revisions: the
 * lists, refusals and results match what a 2025-11-25 client gets; the SDK's ladder (unsupported
 * revision, headers disagreeing with the body) answers with Writ's error in `error.data`.
 */
import { type Client, ProtocolError } from "@modelcontextprotocol/client";
import type { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import { readForEdit, WS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { connectMcp, postMcp } from "../support/mcp-client.ts";
import { connectModernMcp, MODERN_REVISION, postModern } from "../support/mcp-v2-client.ts";

const README = { workspace: WS, path: "README.md" };

const jsonRpcErrorSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number(), z.null()]),
  error: z.object({ code: z.number(), message: z.string(), data: z.record(z.string(), z.unknown()) }),
});
const resultSchema = z.object({ jsonrpc: z.literal("2.0"), result: z.record(z.string(), z.unknown()) });
const toolErrorSchema = z
  .object({
    error: writErrorSchema,
    approval: z.object({ id: z.string(), status: z.string() }).passthrough().optional(),
  })
  .passthrough();

let gw: TestGateway;
let alice: string;
let modern: Client;
let legacy: LegacyClient;

beforeAll(async () => {
  gw = await startTestGateway();
  alice = await gw.token("alice");
  modern = await connectModernMcp(gw.url, alice);
  legacy = await connectMcp(gw.url, alice);
}, 60_000);

afterAll(async () => {
  await modern?.close();
  await legacy?.close();
  await gw?.close();
});

/** A raw request's JSON-RPC error, with Writ's error in its data. */
async function rawError(response: Response, status: number) {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  const message = jsonRpcErrorSchema.parse(JSON.parse(text));
  return { ...message.error, writ: writErrorSchema.parse(message.error.data) };
}

describe("server/discover", () => {
  it("answers Writ's identity, capabilities, instructions and the modern revision", async () => {
    expect(modern.getProtocolEra()).toBe("modern");
    const discovered = modern.getDiscoverResult();
    expect(discovered?.supportedVersions).toContain(MODERN_REVISION);
    expect(discovered?.capabilities).toMatchObject({ tools: {}, resources: {}, prompts: {} });
    expect(discovered?.instructions).toContain("writ/approval");
    expect(discovered?._meta?.["io.modelcontextprotocol/serverInfo"]).toEqual({
      name: "writ",
      version: "0.1.0",
    });
    // List changes and resource updates are relayed on 2026-07-28's subscriptions/listen only
    // (listen.test.ts, listen-resources.test.ts).
    expect(discovered?.capabilities).toMatchObject({
      tools: { listChanged: true },
      resources: { listChanged: true },
      prompts: { listChanged: true },
    });
    expect(discovered?.capabilities.resources?.subscribe).toBe(true);
    // The tasks extension, 2026-07-28's only (tasks.test.ts).
    const { extensions, ...withoutExtensions } = discovered?.capabilities ?? {};
    expect(extensions).toEqual({ "io.modelcontextprotocol/tasks": {} });
    // The 2025-11-25 handshake gives the same, without listChanged (no stream to send it on).
    expect(legacy.getServerCapabilities()).toEqual({
      ...withoutExtensions,
      tools: { listChanged: false },
      resources: {},
      prompts: {},
    });
    expect(legacy.getInstructions()).toBe(discovered?.instructions);
    expect(legacy.getServerVersion()).toEqual({ name: "writ", version: "0.1.0" });
  });
});

describe("the revision's headers and envelope", () => {
  it("refuses an Mcp-Method that disagrees with the body: 400, -32020, Writ's error", async () => {
    const refused = await rawError(
      await postModern(gw.url, alice, { method: "tools/list" }, { "mcp-method": "tools/call" }),
      400,
    );
    expect(refused.code).toBe(-32020);
    expect(refused.writ.category).toBe("invalid_argument");
    expect(refused.writ.suggested_fix).toContain("Mcp-Method");
    expect(refused.data.mismatch).toBeDefined();
  });

  it("refuses an Mcp-Name that disagrees with the tool the body calls, before any decision", async () => {
    const before = (await gw.gateway.log.query({ action: "repo.search" }, 100)).entries.length;
    const refused = await rawError(
      await postModern(
        gw.url,
        alice,
        { method: "tools/call", params: { name: "repo_search", arguments: { workspace: WS, query: "x" } } },
        { "mcp-name": "repo_read" },
      ),
      400,
    );
    expect(refused.code).toBe(-32020);
    // The body decides: nothing was decided for the call the headers disagreed with.
    expect((await gw.gateway.log.query({ action: "repo.search" }, 100)).entries).toHaveLength(before);
  });

  it("refuses an MCP-Protocol-Version header that disagrees with the envelope", async () => {
    const refused = await rawError(
      await postModern(gw.url, alice, { method: "tools/list" }, { "mcp-protocol-version": "2025-11-25" }),
      400,
    );
    expect(refused.code).toBe(-32020);
    expect(refused.writ.category).toBe("invalid_argument");
  });

  it("serves a request naming 2026-07-28 in its header as that revision: without the envelope it is refused", async () => {
    const refused = await rawError(
      await postMcp(
        gw.url,
        alice,
        { jsonrpc: "2.0", id: 3, method: "tools/list" },
        { headers: { "mcp-protocol-version": MODERN_REVISION, "mcp-method": "tools/list" } },
      ),
      400,
    );
    expect(refused.code).toBe(-32602);
    expect(refused.writ.category).toBe("invalid_argument");
  });

  it("answers an unknown revision -32022 with the supported ones", async () => {
    const refused = await rawError(
      await postModern(gw.url, alice, {
        method: "tools/list",
        meta: { "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
      }),
      400,
    );
    expect(refused.code).toBe(-32022);
    expect(refused.data).toMatchObject({ supported: [MODERN_REVISION], requested: "2099-01-01" });
    expect(refused.writ.suggested_fix).toContain("supported");
  });

  it("answers a method Writ does not offer with Writ's error", async () => {
    const refused = await rawError(await postModern(gw.url, alice, { method: "roots/list" }), 404);
    expect(refused.code).toBe(-32601);
    expect(refused.writ.category).toBe("not_found");
  });

  it("is refused from an Origin /mcp does not allow, as 2025-11-25 is", async () => {
    const refused = await rawError(
      await postModern(gw.url, alice, { method: "tools/list" }, { origin: "https://evil.example" }),
      403,
    );
    expect(refused.writ.category).toBe("forbidden");
  });

  it("reads the body strictly: a repeated key in a tools/call is refused and logged", async () => {
    const refused = await rawError(
      await postModern(gw.url, alice, {
        id: "strict-1",
        method: "tools/call",
        params: { name: "repo_search", arguments: { workspace: WS, query: "strict" } },
        edit: (text) => text.replace('"query":"strict"', '"query":"strict","query":"other"'),
      }),
      200,
    );
    expect(refused.code).toBe(-32602);
    expect(refused.writ.field_errors[0]?.path).toBe("/params/arguments/query");
    const page = await gw.gateway.log.query({ action: "repo.search", decision: "error" }, 10);
    expect(page.entries.map((e) => e.error)).toContain("invalid_argument");
  });

  it("still wants a token: 401 with the RFC 9728 challenge", async () => {
    const response = await postModern(gw.url, undefined, { method: "tools/list" });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(
      /^Bearer .*resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
    expect(writErrorSchema.parse(await response.json()).category).toBe("unauthenticated");
  });
});

describe("results", () => {
  it("carry resultType; lists are private and not kept (ttlMs, cacheScope)", async () => {
    const list = resultSchema.parse(await (await postModern(gw.url, alice, { method: "tools/list" })).json());
    expect(list.result).toMatchObject({ resultType: "complete", ttlMs: 0, cacheScope: "private" });
    const call = resultSchema.parse(
      await (
        await postModern(gw.url, alice, {
          method: "tools/call",
          params: { name: "repo_read", arguments: README },
        })
      ).json(),
    );
    expect(call.result).toMatchObject({ resultType: "complete" });
    expect(call.result.ttlMs).toBeUndefined();
  });

  it("lists the caller's tools in one order, the order 2025-11-25 lists them in", async () => {
    const names = async () => (await modern.listTools()).tools.map((t) => t.name);
    const first = await names();
    expect(first).toContain("repo_read");
    expect(await names()).toEqual(first);
    expect((await legacy.listTools()).tools.map((t) => t.name)).toEqual(first);
    // Per caller: an auditor sees no run_code.
    const auditor = await connectModernMcp(gw.url, await gw.token("olga", { roles: ["auditor"] }));
    try {
      expect((await auditor.listTools()).tools.map((t) => t.name)).not.toContain("run_code");
    } finally {
      await auditor.close();
    }
  });
});

describe("tools/call", () => {
  it("runs an allowed call through the pipeline, as 2025-11-25 does", async () => {
    const result = await modern.callTool({ name: "repo_read", arguments: README });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ path: "README.md" });
    const writ = z.object({ decision_id: z.string() }).passthrough().parse(result._meta?.["writ/result"]);
    const entry = (await gw.gateway.log.query({ action: "repo.read" }, 50)).entries.find(
      (e) => e.decision_id === writ.decision_id,
    );
    expect(entry?.decision).toBe("allow");
  });

  it("answers a denied call as a tool error with the structured error", async () => {
    const result = await modern.callTool({ name: "repo_read", arguments: { workspace: WS, path: ".env" } });
    expect(result.isError).toBe(true);
    expect(toolErrorSchema.parse(result.structuredContent).error.category).toBe("policy_denied");
  });

  it("answers an unknown tool as a protocol error with Writ's error", async () => {
    const error = await modern.callTool({ name: "no_such_tool", arguments: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProtocolError);
    if (!(error instanceof ProtocolError)) return;
    expect(error.code).toBe(-32602);
    expect(toolErrorSchema.parse(error.data).error.category).toBe("unknown_tool");
  });

  it("runs run_code when Code Mode is on", async () => {
    const result = await modern.callTool({
      name: "run_code",
      arguments: {
        code: 'return (await tools.repo_read({ workspace: "ws-demo", path: "README.md" })).path;',
      },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ outcome: "returned", value: "README.md" });
  });

  it("runs an approved call when repeated with _meta writ/approval", async () => {
    const carol = await gw.token("carol", { roles: ["maintainer"] });
    const args = {
      workspace: WS,
      path: "src/sum.ts",
      base_hash: await readForEdit(gw, alice, "src/sum.ts"),
      before: "a - b",
      after: "a + b",
    };
    const pending = await modern.callTool({ name: "repo_apply_edit", arguments: args });
    expect(pending.isError).toBe(true);
    const refusal = toolErrorSchema.parse(pending.structuredContent);
    expect(refusal.error.category).toBe("approval_required");
    const id = z.string().parse(refusal.approval?.id);
    const approved = await gw.request("POST", `/v1/approvals/${id}/approve`, { token: carol, body: {} });
    expect(approved.status, approved.text).toBe(200);
    const done = await modern.callTool({
      name: "repo_apply_edit",
      arguments: args,
      _meta: { "writ/approval": id },
    });
    expect(done.isError, JSON.stringify(done)).toBeFalsy();
  });
});

/**
 * Resources and prompts on the 2026-07-28 revision: the conformance reference server behind Writ,
 * read through the v2 SDK's client and a 2025-11-25 client side by side. The same handlers answer
 * both, so the lists, contents and messages match (the modern results add their `resultType`, and
 * the cacheable ones `ttlMs` and `cacheScope`); a refusal is a JSON-RPC error with Writ's error;
 * an upstream tool's log messages reach the caller as a stream before the answer.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type Client, ProtocolError } from "@modelcontextprotocol/client";
import type { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import { startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";
import { connectMcp } from "../support/mcp-client.ts";
import { type ConformanceHttpServer, startConformanceHttpServer } from "../support/mcp-conformance-server.ts";
import { connectModernMcp, postModern } from "../support/mcp-v2-client.ts";

/** Readers may read the reference server's `ref.*` contracts, except its watched resource. */
const POLICY = `package writ

import rego.v1

default decision := {"decision": "deny", "reasons": [{"code": "no_rule_allows", "message": "no policy rule allows this action", "visible_to_model": true}]}

decision := {"decision": "allow", "reasons": [], "grant": {"ttl_seconds": 60, "max_uses": 1}} if {
	"reader" in input.subject.roles
	startswith(input.action.name, "ref.")
	input.action.name != "ref.watched"
}
`;

const mcpBackend = (
  backend: Record<string, unknown>,
  name: string,
  schema: Record<string, unknown> = {},
) => ({
  name,
  version: "1",
  description: name,
  input_schema: { type: "object", ...schema },
  side_effect: "none",
  idempotency: "natural",
  backend: { server: "ref", ...backend },
});

const CONTRACTS = [
  mcpBackend({ kind: "mcp_resource", uri: "test://static-text" }, "ref.static_text"),
  mcpBackend({ kind: "mcp_resource", uri: "test://watched-resource" }, "ref.watched"),
  mcpBackend({ kind: "mcp", tool: "test_tool_with_logging" }, "ref.logging_tool"),
  mcpBackend({ kind: "mcp_prompt", prompt: "test_prompt_with_arguments" }, "ref.args_prompt", {
    properties: { arg1: { type: "string" }, arg2: { type: "string" } },
    required: ["arg1", "arg2"],
  }),
];

let gw: TestGateway;
let dir: string;
let reference: ConformanceHttpServer;
let modern: Client;
let legacy: LegacyClient;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "writ-mcp-modern-resources-"));
  await mkdir(path.join(dir, "writ"));
  await writeFile(path.join(dir, "writ", "decision.rego"), POLICY);
  reference = await startConformanceHttpServer();
  gw = await startTestGateway({
    configure: (document) => ({
      ...document,
      tools: CONTRACTS,
      limits: [],
      history: [],
      mcp: { servers: [{ name: "ref", transport: "http", url: reference.url }] },
      policy: { ...(typeof document.policy === "object" ? document.policy : {}), dir },
    }),
  });
  await waitFor(
    "the reference server to connect",
    async () => (await gw.health()).mcp_servers?.every((server) => server.connected) || undefined,
    15_000,
  );
  const token = await gw.token("rita", { roles: ["reader"] });
  modern = await connectModernMcp(gw.url, token);
  legacy = await connectMcp(gw.url, token);
}, 60_000);

afterAll(async () => {
  await modern?.close();
  await legacy?.close();
  await gw?.close();
  await reference?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A result without what only one revision stamps on it, nor what differs between two runs. */
function comparable(result: Record<string, unknown>): unknown {
  const { resultType: _type, ttlMs: _ttl, cacheScope: _scope, _meta, ...rest } = result;
  const meta = z.record(z.string(), z.unknown()).optional().parse(_meta);
  const { "io.modelcontextprotocol/serverInfo": _server, "writ/result": writ, ...others } = meta ?? {};
  const kept = writ === undefined ? others : { ...others, "writ/result": "<decision>" };
  return Object.keys(kept).length === 0 ? rest : { ...rest, _meta: kept };
}

describe("resources and prompts on 2026-07-28", () => {
  it("lists what the caller may see, as 2025-11-25 lists it", async () => {
    const resources = await modern.listResources();
    expect(resources.resources.map((r) => r.uri)).toEqual(["test://static-text"]);
    expect(comparable(resources)).toEqual(comparable(await legacy.listResources()));
    expect(comparable(await modern.listResourceTemplates())).toEqual(
      comparable(await legacy.listResourceTemplates()),
    );
    const prompts = await modern.listPrompts();
    expect(prompts.prompts.map((p) => p.name)).toEqual(["test_prompt_with_arguments"]);
    expect(comparable(prompts)).toEqual(comparable(await legacy.listPrompts()));
  });

  it("reads a resource and gets a prompt through the pipeline, as 2025-11-25 does", async () => {
    const read = await modern.readResource({ uri: "test://static-text" });
    expect(read.contents[0]).toMatchObject({ uri: "test://static-text" });
    expect(read._meta?.["writ/result"]).toMatchObject({ decision_id: expect.any(String) });
    expect(comparable(read)).toEqual(comparable(await legacy.readResource({ uri: "test://static-text" })));
    const args = { arg1: "one", arg2: "two" };
    const prompt = await modern.getPrompt({ name: "test_prompt_with_arguments", arguments: args });
    expect(prompt.messages.length).toBeGreaterThan(0);
    expect(comparable(prompt)).toEqual(
      comparable(await legacy.getPrompt({ name: "test_prompt_with_arguments", arguments: args })),
    );
  });

  it("marks a read private and not kept", async () => {
    const answer = await postModern(gw.url, await gw.token("rita", { roles: ["reader"] }), {
      method: "resources/read",
      params: { uri: "test://static-text" },
    });
    const body = z.object({ result: z.record(z.string(), z.unknown()) }).parse(await answer.json());
    expect(body.result).toMatchObject({ resultType: "complete", ttlMs: 0, cacheScope: "private" });
  });

  it("streams a call's log messages before its answer (the same observer as 2025-11-25)", async () => {
    const answer = await postModern(gw.url, await gw.token("rita", { roles: ["reader"] }), {
      id: "logs-1",
      method: "tools/call",
      params: { name: "ref.logging_tool", arguments: {} },
    });
    expect(answer.headers.get("content-type")).toContain("text/event-stream");
    const events = (await answer.text())
      .split("\n\n")
      .flatMap((event) => event.split("\n").filter((line) => line.startsWith("data: ")))
      .map((line) =>
        z
          .object({ method: z.string().optional(), id: z.string().optional() })
          .passthrough()
          .parse(JSON.parse(line.slice("data: ".length))),
      );
    const kinds = events.map((event) => event.method ?? event.id);
    expect(kinds.at(-1)).toBe("logs-1");
    expect(kinds.slice(0, -1).length).toBeGreaterThan(0);
    expect(new Set(kinds.slice(0, -1))).toEqual(new Set(["notifications/message"]));
  });

  it("refuses a read the policy denies with a JSON-RPC error carrying Writ's error", async () => {
    const error = await modern.readResource({ uri: "test://watched-resource" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProtocolError);
    if (!(error instanceof ProtocolError)) return;
    expect(error.code).toBe(-32000);
    const data = z.object({ error: writErrorSchema }).passthrough().parse(error.data);
    expect(data.error.category).toBe("policy_denied");
  });
});

/**
 * An MCP server's resources and prompts through Writ: the conformance reference server
 * (test/support/mcp-conformance-server.ts) over Streamable HTTP, behind a recording proxy that
 * keeps every JSON-RPC message Writ sends it, and Writ's /mcp in front, driven by the SDK's client.
 * Lists are filtered per caller by the discovery policy; reads and prompts run the whole
 * pipeline, reach the server with the grant in `_meta` only when allowed, and come back as the
 * server sent them (text scrubbed of secrets, blobs untouched).
 */

import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, request as httpRequest } from "node:http";
import os from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Client as SdkClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { isInputRequiredResult } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { parseToolContracts } from "../../src/contracts/index.ts";
import { WritError } from "../../src/core/errors.ts";
import { ToolDiscovery } from "../../src/discovery/index.ts";
import { APPROVAL_INPUT_KEY, messageRound } from "../../src/mcp/approval-flow.ts";
import { CancellableCalls } from "../../src/mcp/cancellation.ts";
import type { ProposedMessage } from "../../src/mcp/methods/approved.ts";
import type { CallContext } from "../../src/mcp/methods/context.ts";
import { resourceContents } from "../../src/mcp/results.ts";
import { logEntries } from "../e2e/api.ts";
import { startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";
import { connectMcp } from "../support/mcp-client.ts";
import { type ConformanceHttpServer, startConformanceHttpServer } from "../support/mcp-conformance-server.ts";

const POLICY = `package writ

import rego.v1

default decision := {"decision": "deny", "reasons": [{"code": "no_rule_allows", "message": "no policy rule allows this action", "visible_to_model": true}]}

allow_once := {"decision": "allow", "reasons": [], "grant": {"ttl_seconds": 60, "max_uses": 1}}

approved if "moderator" in input.context.approval.approver.roles

decision := allow_once if {
	"viewer" in input.subject.roles
	startswith(input.action.name, "ref.")
	not input.action.name in {"ref.watched", "ref.image_prompt"}
	not withheld_id
}

# A helper rule, as OPA needs it: \`not input.action.args.id in {…}\` is undefined, not true, when
# the call has no id (a listing), since OPA evaluates a negated expression's refs before it.
withheld_id if input.action.args.id in {"forbidden", "needs-approval"}

decision := allow_once if {
	input.action.args.id == "needs-approval"
	approved
}

decision := {
	"decision": "require_approval",
	"reasons": [{"code": "approval_required", "message": "this page needs a moderator", "visible_to_model": true}],
	"approval": {"approver_roles": ["moderator"], "ttl_seconds": 600},
} if {
	"viewer" in input.subject.roles
	input.action.args.id == "needs-approval"
	not approved
}
`;

const anyObject = { type: "object" };

function resourceContract(name: string, uri: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    version: "1",
    description: `reads ${uri}`,
    input_schema: anyObject,
    side_effect: "none",
    idempotency: "natural",
    backend: { kind: "mcp_resource", server: "ref", uri },
    ...extra,
  };
}

function promptContract(name: string, prompt: string, inputSchema: Record<string, unknown> = anyObject) {
  return {
    name,
    version: "1",
    description: `the prompt ${prompt}`,
    input_schema: inputSchema,
    side_effect: "none",
    idempotency: "natural",
    backend: { kind: "mcp_prompt", server: "ref", prompt },
  };
}

const CONTRACTS = [
  resourceContract("ref.static_text", "test://static-text"),
  resourceContract("ref.static_binary", "test://static-binary"),
  resourceContract("ref.watched", "test://watched-resource"),
  resourceContract("ref.template", "test://template/{id}/data", {
    input_schema: {
      type: "object",
      properties: { uri: { type: "string" }, id: { type: "string", maxLength: 40 } },
      required: ["uri", "id"],
      additionalProperties: false,
    },
  }),
  promptContract("ref.simple_prompt", "test_simple_prompt"),
  promptContract("ref.args_prompt", "test_prompt_with_arguments", {
    type: "object",
    properties: { arg1: { type: "string" }, arg2: { type: "string" } },
    required: ["arg1", "arg2"],
    additionalProperties: false,
  }),
  promptContract("ref.resource_prompt", "test_prompt_with_embedded_resource"),
  promptContract("ref.image_prompt", "test_prompt_with_image"),
];

const SECRET = "AKIAABCDEFGHIJKLMNOP";

interface Recorded {
  method: string;
  params: Record<string, unknown>;
}

/** A loopback proxy to `target` that records each JSON-RPC request it forwards. */
async function startRecordingProxy(target: string) {
  const to = new URL(target);
  const recorded: Recorded[] = [];
  const message = z.object({ method: z.string(), params: z.record(z.string(), z.unknown()).default({}) });
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const body = Buffer.concat(chunks);
      if (body.length > 0) {
        const parsed = message.safeParse(JSON.parse(body.toString("utf8")));
        if (parsed.success) recorded.push(parsed.data);
      }
      const forwarded = httpRequest(
        {
          hostname: to.hostname,
          port: to.port,
          method: incoming.method,
          path: to.pathname,
          headers: incoming.headers,
        },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          outgoing.flushHeaders();
          answer.pipe(outgoing);
        },
      );
      forwarded.on("error", (error) => outgoing.destroy(error));
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no port");
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    recorded,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const refusalSchema = z.object({
  error: z.object({ category: z.string(), suggested_fix: z.string().min(1) }),
  decision_id: z.string().optional(),
  approval: z.unknown().optional(),
});

/** The JSON-RPC error `promise` fails with: its code and Writ's error in `data`. */
async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof McpError)) throw new Error(`expected a JSON-RPC error, got ${String(error)}`);
  return { code: error.code, ...refusalSchema.parse(error.data) };
}

let gw: TestGateway;
let dir: string;
let reference: ConformanceHttpServer;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
let direct: Client;
let viewer: Client;
let stranger: Client;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "writ-mcp-resources-"));
  await mkdir(path.join(dir, "writ"));
  await writeFile(path.join(dir, "writ", "decision.rego"), POLICY);
  reference = await startConformanceHttpServer();
  proxy = await startRecordingProxy(reference.url);
  gw = await startTestGateway({
    configure: (document) => ({
      ...document,
      tools: CONTRACTS,
      // The default limits and history facts name the demo tools this configuration replaces.
      limits: [],
      history: [],
      mcp: { servers: [{ name: "ref", transport: "http", url: proxy.url }] },
      policy: { ...(typeof document.policy === "object" ? document.policy : {}), dir },
    }),
  });
  await waitFor(
    "the reference server to connect",
    async () => (await gw.health()).mcp_servers?.every((server) => server.connected) || undefined,
    15_000,
  );
  direct = new SdkClient({ name: "writ-resources-test-direct", version: "1.0.0" });
  await direct.connect(new StreamableHTTPClientTransport(new URL(reference.url)));
  viewer = await connectMcp(gw.url, await gw.token("val", { roles: ["viewer"] }), "writ-resources-test");
  stranger = await connectMcp(gw.url, await gw.token("sam", { roles: [] }), "writ-resources-test");
}, 60_000);

afterAll(async () => {
  await stranger?.close();
  await viewer?.close();
  await direct?.close();
  await gw?.close();
  await proxy?.close();
  await reference?.close();
  await rm(dir, { recursive: true, force: true });
});

/** What reached the server for `method` and `key` (a URI or a prompt name). */
function reached(method: string, key: string): Recorded[] {
  return proxy.recorded.filter((r) => r.method === method && (r.params.uri ?? r.params.name) === key);
}

describe("listing resources, templates and prompts", () => {
  it("declares resources and prompts, without subscriptions or list changes", () => {
    expect(viewer.getServerCapabilities()).toMatchObject({ resources: {}, prompts: {} });
    expect(viewer.getServerCapabilities()?.resources?.subscribe).toBeUndefined();
  });

  it("lists the resources the caller's policy shows, as the server described them", async () => {
    const { resources } = await viewer.listResources();
    const upstream = (await direct.listResources()).resources;
    const expected = upstream
      .filter((r) => r.uri !== "test://watched-resource")
      .map((r) => expect.objectContaining({ ...r, _meta: expect.anything() }));
    expect(resources).toEqual(expected);
    expect(resources.map((r) => r._meta?.["writ/contract"])).toEqual([
      { name: "ref.static_text", version: "1" },
      { name: "ref.static_binary", version: "1" },
    ]);
    expect((await stranger.listResources()).resources).toEqual([]);
  });

  it("lists the templates that are a visible contract's uri", async () => {
    const { resourceTemplates } = await viewer.listResourceTemplates();
    const [template] = (await direct.listResourceTemplates()).resourceTemplates;
    expect(resourceTemplates).toEqual([
      { ...template, _meta: { "writ/contract": { name: "ref.template", version: "1" } } },
    ]);
    expect((await stranger.listResourceTemplates()).resourceTemplates).toEqual([]);
  });

  it("lists the prompts with a visible contract, with their arguments", async () => {
    const { prompts } = await viewer.listPrompts();
    const upstream = (await direct.listPrompts()).prompts;
    expect(prompts.map((p) => p.name)).toEqual([
      "test_simple_prompt",
      "test_prompt_with_arguments",
      "test_prompt_with_embedded_resource",
    ]);
    const withArgs = prompts.find((p) => p.name === "test_prompt_with_arguments");
    const { _meta: _, ...described } = withArgs ?? {};
    expect(described).toEqual(upstream.find((p) => p.name === "test_prompt_with_arguments"));
    expect((await stranger.listPrompts()).prompts).toEqual([]);
  });
});

describe("reading resources", () => {
  it("reads text as the server sent it, with the grant in _meta", async () => {
    const through = await viewer.readResource({ uri: "test://static-text" });
    const straight = await direct.readResource({ uri: "test://static-text" });
    expect(through.contents).toEqual(straight.contents);
    const [sent] = reached("resources/read", "test://static-text");
    expect(z.object({ "writ/grant": z.string().min(20) }).safeParse(sent?.params._meta).success).toBe(true);
  });

  it("passes a blob untouched", async () => {
    const through = await viewer.readResource({ uri: "test://static-binary" });
    const straight = await direct.readResource({ uri: "test://static-binary" });
    expect(through.contents).toEqual(straight.contents);
    expect(through.contents[0]).toHaveProperty("blob");
  });

  it("matches a template, shows its variables to the policy, and scrubs secrets in the text", async () => {
    const uri = `test://template/${SECRET}/data`;
    const through = await viewer.readResource({ uri });
    const [content] = through.contents;
    expect(content).toMatchObject({ uri, mimeType: "application/json" });
    const text = z.object({ text: z.string() }).parse(content).text;
    expect(text).toContain("templateTest");
    expect(text).not.toContain(SECRET);
    const meta = z.object({ "writ/result": z.object({ decision_id: z.string() }) }).parse(through._meta);
    const entry = await gw.gateway.store.getDecision(meta["writ/result"].decision_id);
    expect(entry?.action).toBe("ref.template");
    expect(entry?.input).toMatchObject({
      action: { args: { id: expect.any(String), uri: expect.any(String) } },
    });
  });

  it("denies a read by a template variable; the server never sees it; the decision is logged", async () => {
    const uri = "test://template/forbidden/data";
    const refused = await refusal(viewer.readResource({ uri }));
    expect(refused.code).toBe(-32000);
    expect(refused.error.category).toBe("policy_denied");
    expect(reached("resources/read", uri)).toEqual([]);
    const entry = await gw.gateway.store.getDecision(refused.decision_id ?? "");
    expect(entry?.decision).toBe("deny");
    expect(entry?.action).toBe("ref.template");
    expect(entry?.input).toMatchObject({
      context: { source: "mcp" },
      action: { name: "ref.template", args: { uri, id: "forbidden" } },
    });
  });

  it("denies a resource the policy hides, before the server", async () => {
    const refused = await refusal(viewer.readResource({ uri: "test://watched-resource" }));
    expect(refused.error.category).toBe("policy_denied");
    expect(reached("resources/read", "test://watched-resource")).toEqual([]);
  });

  it("refuses a URI no contract governs with -32602, logged", async () => {
    const uri = "test://nowhere";
    const refused = await refusal(viewer.readResource({ uri }));
    expect(refused.code).toBe(-32602);
    expect(refused.error.category).toBe("unknown_tool");
    const entry = await gw.gateway.store.getDecision(refused.decision_id ?? "");
    expect(entry?.input).toMatchObject({ tool: uri, source: "mcp", arguments: { uri } });
  });

  it("waits for an approval, then reads once with the released grant", async () => {
    const uri = "test://template/needs-approval/data";
    const pending = await refusal(viewer.readResource({ uri }));
    expect(pending.code).toBe(-32000);
    expect(pending.error.category).toBe("approval_required");
    expect(pending.error.suggested_fix).toContain("writ/approval");
    const approvalId = z.object({ approval: z.object({ id: z.string() }) }).parse(pending).approval.id;
    expect(reached("resources/read", uri)).toEqual([]);

    const moderator = await gw.token("mona", { roles: ["moderator"] });
    const approved = await gw.request("POST", `/v1/approvals/${approvalId}/approve`, {
      token: moderator,
      body: { reason: "fine" },
    });
    expect(approved.status, approved.text).toBe(200);
    const done = await viewer.readResource({ uri, _meta: { "writ/approval": approvalId } });
    expect(done.contents).toMatchObject([{ uri }]);
    expect(reached("resources/read", uri)).toHaveLength(1);
    const again = await refusal(viewer.readResource({ uri, _meta: { "writ/approval": approvalId } }));
    expect(again.error.category).toBe("policy_denied");
  });

  it("logs a read refused for want of a token, and answers 401", async () => {
    const requestId = "resources-unauthenticated";
    const answer = await gw.request("POST", "/mcp", {
      body: { jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "test://static-text" } },
      headers: { accept: "application/json, text/event-stream" },
      requestId,
    });
    expect(answer.status).toBe(401);
    const entries = (await logEntries(gw, { decision: "error" })).filter(
      (e) => e.caller_request_id === requestId,
    );
    expect(entries).toHaveLength(1);
    expect(entries[0]?.error).toBe("unauthenticated");
  });

  it("runs through the HTTP API by the contract's name, the contents as content items", async () => {
    const token = await gw.token("val", { roles: ["viewer"] });
    const answer = await gw.propose(token, {
      format: "canonical",
      payload: { tool: "ref.template", arguments: { uri: "test://template/7/data" } },
      execute: true,
    });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json).toMatchObject({
      results: [
        {
          decision: "allow",
          result: {
            content: [
              { type: "resource", resource: { uri: "test://template/7/data", mimeType: "application/json" } },
            ],
          },
        },
      ],
    });
    const mismatch = await gw.propose(token, {
      format: "canonical",
      payload: { tool: "ref.template", arguments: { uri: "test://template/7/data", id: "8" } },
    });
    expect(mismatch.json).toMatchObject({
      results: [{ decision: "error", error: { category: "invalid_argument" } }],
    });
  });
});

describe("getting prompts", () => {
  it("passes the messages with their roles and content", async () => {
    for (const name of ["test_simple_prompt", "test_prompt_with_embedded_resource"]) {
      const args: Record<string, string> =
        name === "test_simple_prompt" ? {} : { resourceUri: "test://embedded" };
      const through = await viewer.getPrompt({ name, arguments: args });
      const straight = await direct.getPrompt({ name, arguments: args });
      expect(through.messages).toEqual(straight.messages);
    }
  });

  it("passes the arguments (secrets scrubbed in the answer)", async () => {
    const through = await viewer.getPrompt({
      name: "test_prompt_with_arguments",
      arguments: { arg1: "paris", arg2: SECRET },
    });
    expect(through.messages).toHaveLength(1);
    expect(through.messages[0]?.role).toBe("user");
    const text = z
      .object({ type: z.literal("text"), text: z.string() })
      .parse(through.messages[0]?.content).text;
    expect(text).toContain("arg1='paris'");
    expect(text).not.toContain(SECRET);
    const [sent] = reached("prompts/get", "test_prompt_with_arguments");
    expect(sent?.params.arguments).toEqual({ arg1: "paris", arg2: SECRET });
  });

  it("refuses arguments that break the contract's schema with -32602, before the server", async () => {
    const before = reached("prompts/get", "test_prompt_with_arguments").length;
    const refused = await refusal(
      viewer.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "x" } }),
    );
    expect(refused.code).toBe(-32602);
    expect(refused.error.category).toBe("invalid_argument");
    expect(reached("prompts/get", "test_prompt_with_arguments")).toHaveLength(before);
  });

  it("denies a prompt the policy hides, and refuses one no contract governs", async () => {
    const denied = await refusal(viewer.getPrompt({ name: "test_prompt_with_image" }));
    expect(denied.error.category).toBe("policy_denied");
    expect(reached("prompts/get", "test_prompt_with_image")).toEqual([]);
    const unknown = await refusal(viewer.getPrompt({ name: "no_such_prompt" }));
    expect(unknown.code).toBe(-32602);
    expect(unknown.error.category).toBe("unknown_tool");
  });

  it("is not a tool: tools/call naming a prompt's or resource's contract is an unknown tool", async () => {
    expect((await viewer.listTools()).tools).toEqual([]);
    const error = await viewer
      .callTool({ name: "ref_simple_prompt", arguments: {} })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
  });
});

describe("resource and prompt contracts in the configuration", () => {
  it("must have no side effect and no output schema", () => {
    const problems = (contract: Record<string, unknown>) => {
      try {
        parseToolContracts([contract], "/tools");
        return [];
      } catch (error) {
        if (!(error instanceof WritError)) throw error;
        return error.fieldErrors.map((e) => e.path);
      }
    };
    expect(problems(resourceContract("a.b", "test://x", { side_effect: "committing" }))).toEqual([
      "/tools/0/side_effect",
    ]);
    expect(problems({ ...promptContract("a.c", "p"), output_schema: { type: "object" } })).toEqual([
      "/tools/0/output_schema",
    ]);
    expect(problems(resourceContract("a.d", "test://template/{id}"))).toEqual([]);
  });
});

describe("a read that needs approval, on 2026-07-28 (src/mcp/approval-flow.ts)", () => {
  it("asks through the approval's console page, then reads once with the state", async () => {
    const uri = "test://template/needs-approval/data";
    const authorization = `Bearer ${await gw.token("vera", { roles: ["viewer"] })}`;
    const ctx: CallContext = {
      gw: gw.gateway,
      discovery: new ToolDiscovery(gw.gateway),
      cancellable: new CancellableCalls(gw.gateway.store),
      challenge: {},
      subject: await gw.gateway.identity.verify(authorization),
      authorization,
      requestId: "resources-modern-approval",
      observer: {},
      requestUrl: `${gw.url}/mcp`,
    };
    const message: ProposedMessage = { method: "resources/read", params: { uri } };
    const before = reached("resources/read", uri).length;
    const first = await messageRound(ctx, message, undefined, 1, { elicitsUrl: true });
    if (!isInputRequiredResult(first) || first.requestState === undefined) {
      throw new Error(`expected input_required, got ${JSON.stringify(first)}`);
    }
    const url = z
      .object({ params: z.object({ url: z.string() }) })
      .parse(first.inputRequests?.[APPROVAL_INPUT_KEY]).params.url;
    const approvalId = url.slice(url.indexOf("#approval-") + "#approval-".length);
    expect(url).toBe(`${gw.url}/console/approvals#approval-${approvalId}`);
    expect(reached("resources/read", uri)).toHaveLength(before);

    const moderator = await gw.token("mona", { roles: ["moderator"] });
    const approved = await gw.request("POST", `/v1/approvals/${approvalId}/approve`, {
      token: moderator,
      body: {},
    });
    expect(approved.status, approved.text).toBe(200);
    const retry = { requestState: first.requestState, elicitsUrl: true };
    const done = await messageRound(ctx, message, undefined, 2, retry);
    if (isInputRequiredResult(done)) throw new Error("expected the read's result");
    expect(resourceContents(done.result)).toMatchObject([{ uri }]);
    expect(reached("resources/read", uri)).toHaveLength(before + 1);
    // The same state again: the grant is spent; a JSON-RPC error with Writ's error as data.
    const again = await messageRound(ctx, message, undefined, 3, retry).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(again).toMatchObject({ code: -32000, data: { error: { category: "policy_denied" } } });
    expect(reached("resources/read", uri)).toHaveLength(before + 1);
  });
});

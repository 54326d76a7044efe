/**
 * What an MCP server answers arrives through Writ as the server sent it: the reference server
 * `@modelcontextprotocol/server-everything` (from npm, spawned over stdio) is called once directly
 * and once through Writ's /mcp with the SDK's client, and the content must be the same, item for
 * item (text, image, embedded resources, resource links, mixed content, structured content).
 * Audio, progress, log messages and cancellation use a small server of our own
 * (test/support/mcp-media-stdio.ts) that records what reached it.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  type CallToolResult,
  CallToolResultSchema,
  LoggingMessageNotificationSchema,
  type Progress,
  ProgressNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { Server as ModernServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import { useFastPath } from "../../src/mcp/fast-path.ts";
import { STREAM_AFTER_MS } from "../../src/mcp/lazy-stream.ts";
import { startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";
import { connectMcp, postMcp, withoutRunIds } from "../support/mcp-client.ts";
import { connectModernMcp, postModern } from "../support/mcp-v2-client.ts";
import { repoRoot } from "../support/paths.ts";

const EVERYTHING = path.join(repoRoot, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

const POLICY = `package writ

import rego.v1

default decision := {"decision": "deny", "reasons": [{"code": "no_rule_allows", "message": "no policy rule allows this action", "visible_to_model": true}]}

decision := {"decision": "allow", "reasons": [], "grant": {"ttl_seconds": 60, "max_uses": 1}} if "viewer" in input.subject.roles

decision := {
	"decision": "allow_with_conditions",
	"reasons": [],
	"grant": {"ttl_seconds": 60, "max_uses": 1},
	"conditions": [{"type": "redact_result", "paths": ["/temperature"]}],
} if "intern" in input.subject.roles
`;

function contract(
  name: string,
  server: string,
  tool: string,
  properties: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    name,
    version: "1",
    description: `${tool} on the ${server} server`,
    input_schema: { type: "object", properties, additionalProperties: false },
    side_effect: "none",
    idempotency: "natural",
    backend: { kind: "mcp", server, tool },
    model_views: [{ family: "mcp", name: tool }],
    ...extra,
  };
}

const CONTRACTS = [
  contract("everything.echo", "everything", "echo", { message: { type: "string" } }),
  contract("everything.image", "everything", "get-tiny-image"),
  contract("everything.links", "everything", "get-resource-links", { count: { type: "number" } }),
  contract("everything.reference", "everything", "get-resource-reference", {
    resourceType: { type: "string" },
    resourceId: { type: "number" },
  }),
  contract("everything.annotated", "everything", "get-annotated-message", {
    messageType: { type: "string" },
    includeImage: { type: "boolean" },
  }),
  contract("everything.weather", "everything", "get-structured-content", { location: { type: "string" } }),
  contract("everything.long", "everything", "trigger-long-running-operation", {
    duration: { type: "number" },
    steps: { type: "number" },
  }),
  contract("media.sound", "media", "sound"),
  contract(
    "media.secret_sound",
    "media",
    "sound",
    {},
    {
      model_views: [{ family: "mcp", name: "secret_sound" }],
      data_classification: "secret",
    },
  ),
  contract("media.wait", "media", "wait", {
    steps: { type: "integer" },
    ms: { type: "integer" },
    quiet: { type: "boolean" },
  }),
];

let gw: TestGateway;
let dir: string;
let callLog: string;
let direct: Client;
let viewer: Client;

function connect(token: string): Promise<Client> {
  return connectMcp(gw.url, token, "writ-content-test");
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  return CallToolResultSchema.parse(await client.callTool({ name, arguments: args }));
}

async function events(): Promise<string[]> {
  const text = await readFile(callLog, "utf8");
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => z.object({ event: z.string() }).parse(JSON.parse(line)).event);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "writ-mcp-content-"));
  await mkdir(path.join(dir, "policy", "writ"), { recursive: true });
  await writeFile(path.join(dir, "policy", "writ", "decision.rego"), POLICY);
  callLog = path.join(dir, "calls.ndjson");
  await writeFile(callLog, "");
  gw = await startTestGateway({
    configure: (document) => ({
      ...document,
      store: {
        ...z.record(z.string(), z.unknown()).parse(document.store),
        sqlite: path.join(dir, "shared.db"),
      },
      tools: CONTRACTS,
      // The default limits and history facts name the demo tools this configuration replaces.
      limits: [],
      history: [],
      mcp: {
        servers: [
          { name: "everything", transport: "stdio", command: process.execPath, args: [EVERYTHING, "stdio"] },
          {
            name: "media",
            transport: "stdio",
            command: process.execPath,
            args: ["--import", "tsx", path.join(repoRoot, "test/support/mcp-media-stdio.ts")],
            cwd: repoRoot,
            env: { MEDIA_CALL_LOG: callLog },
          },
        ],
      },
      policy: {
        ...(typeof document.policy === "object" ? document.policy : {}),
        dir: path.join(dir, "policy"),
      },
    }),
  });
  direct = new Client({ name: "writ-content-test-direct", version: "1.0.0" });
  await direct.connect(
    new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, "stdio"], stderr: "ignore" }),
  );
  await waitFor(
    "both MCP servers to connect",
    async () => (await gw.health()).mcp_servers?.every((server) => server.connected) || undefined,
    15_000,
  );
  viewer = await connect(await gw.token("val", { roles: ["viewer"] }));
}, 60_000);

afterAll(async () => {
  await viewer?.close();
  await direct?.close();
  await gw?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("an MCP server's results arrive through Writ as the server sent them", () => {
  const cases: [string, string, Record<string, unknown>, string[]][] = [
    ["text", "echo", { message: "hello" }, ["text"]],
    ["an image", "get-tiny-image", {}, ["text", "image", "text"]],
    ["resource links", "get-resource-links", { count: 2 }, ["text", "resource_link", "resource_link"]],
    [
      "an embedded text resource",
      "get-resource-reference",
      { resourceType: "Text", resourceId: 1 },
      ["text", "resource", "text"],
    ],
    [
      "an embedded blob resource",
      "get-resource-reference",
      { resourceType: "Blob", resourceId: 2 },
      ["text", "resource", "text"],
    ],
    [
      "mixed, annotated content",
      "get-annotated-message",
      { messageType: "success", includeImage: true },
      ["text", "image"],
    ],
  ];
  const withoutClock = (content: unknown[]): unknown =>
    JSON.parse(
      JSON.stringify(content).replace(/created at \d{1,2}:\d{2}:\d{2}( [AP]M)?/g, "created at <time>"),
    );
  for (const [what, tool, args, types] of cases) {
    it(`${what}`, async () => {
      const through = await call(viewer, tool, args);
      const straight = await call(direct, tool, args);
      expect(through.isError).toBeFalsy();
      expect(through.content.map((item) => item.type)).toEqual(types);
      // server-everything stamps an embedded text resource with the time it made it (to the
      // second): the two calls may fall either side of a second's turn.
      expect(withoutClock(through.content)).toEqual(withoutClock(straight.content));
      expect(through.structuredContent).toBeUndefined();
      expect(
        z.object({ decision_id: z.string() }).passthrough().parse(through._meta?.["writ/result"]),
      ).toBeTruthy();
    });
  }

  it("structured content, with the text the server sent beside it", async () => {
    const through = await call(viewer, "get-structured-content", { location: "Chicago" });
    const straight = await call(direct, "get-structured-content", { location: "Chicago" });
    expect(through.content).toEqual(straight.content);
    expect(through.structuredContent).toEqual(straight.structuredContent);
    expect(through.structuredContent).toHaveProperty("temperature");
  });

  it("audio", async () => {
    const through = await call(viewer, "sound");
    expect(through.content).toEqual([
      { type: "audio", data: Buffer.from("RIFF").toString("base64"), mimeType: "audio/wav" },
      { type: "text", text: "a short sound" },
    ]);
  });

  it("scrubs secrets in text, and leaves binary data untouched", async () => {
    const secret = "sk-live-0123456789abcdef0123";
    const through = await call(viewer, "echo", { message: `the key is ${secret}` });
    const [item] = through.content;
    expect(item?.type).toBe("text");
    expect(JSON.stringify(through.content)).not.toContain(secret);
    expect(JSON.stringify(through.content)).toContain("the key is");
  });

  it("withholds a secret-classified result whole, and says so", async () => {
    const through = await call(viewer, "secret_sound");
    expect(through.content).toEqual([
      { type: "text", text: "(withheld: the result's classification is secret)" },
    ]);
    expect(JSON.stringify(through)).not.toContain(Buffer.from("RIFF").toString("base64"));
    expect(
      z
        .object({ redacted: z.array(z.string()) })
        .passthrough()
        .parse(through._meta?.["writ/result"]).redacted,
    ).toEqual(["classification:secret"]);
  });

  it("applies a redact_result condition to structured content and to the JSON text beside it", async () => {
    const intern = await connect(await gw.token("ian", { roles: ["intern"] }));
    try {
      const through = await call(intern, "get-structured-content", { location: "Chicago" });
      expect(through.structuredContent).not.toHaveProperty("temperature");
      expect(through.structuredContent).toHaveProperty("conditions");
      expect(JSON.stringify(through.content)).not.toContain("temperature");
      const meta = z
        .object({ redacted: z.array(z.string()) })
        .passthrough()
        .parse(through._meta?.["writ/result"]);
      expect(meta.redacted).toEqual(expect.arrayContaining(["/temperature"]));
    } finally {
      await intern.close();
    }
  });

  it("the HTTP API's layered result keeps the content items", async () => {
    const answer = await gw.request("POST", "/v1/proposals", {
      token: await gw.token("val", { roles: ["viewer"] }),
      body: { format: "canonical", execute: true, payload: { tool: "everything.image", arguments: {} } },
    });
    expect(answer.status, answer.text).toBe(200);
    const straight = await call(direct, "get-tiny-image");
    const body = z
      .object({ results: z.array(z.object({ result: z.object({ content: z.array(z.unknown()) }) })) })
      .parse(answer.json, { reportInput: true });
    expect(body.results[0]?.result.content).toEqual(straight.content);
  });
});

describe("how a call from a caller accepting streams is answered", () => {
  const streaming = { headers: { accept: "application/json, text/event-stream" } };
  const waitCall = (id: string, args: Record<string, unknown>) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "wait", arguments: args },
  });

  it("answers a call that sends nothing before its answer as JSON", async () => {
    const token = await gw.token("val", { roles: ["viewer"] });
    const answer = await postMcp(
      gw.url,
      token,
      { jsonrpc: "2.0", id: "plain-1", method: "tools/call", params: { name: "sound", arguments: {} } },
      streaming,
    );
    expect(answer.headers.get("content-type")).toContain("application/json");
    const message = z
      .object({ id: z.string(), result: z.object({ content: z.array(z.object({ type: z.string() })) }) })
      .parse(await answer.json());
    expect(message.id).toBe("plain-1");
    expect(message.result.content.map((item) => item.type)).toContain("audio");
  });

  it("answers alike whether Writ answers the call itself or through the SDK's server (src/mcp/fast-path.ts)", async () => {
    const token = await gw.token("val", { roles: ["viewer"] });
    const answers = async (fast: boolean, id: string, args: Record<string, unknown>) => {
      useFastPath(fast);
      try {
        const answer = await postMcp(gw.url, token, waitCall(id, args), streaming);
        return { type: answer.headers.get("content-type"), body: withoutRunIds(await answer.text()) };
      } finally {
        useFastPath(true);
      }
    };
    // Log messages (a stream), and a call that outlives STREAM_AFTER_MS without any (a stream too).
    for (const [id, args] of [
      ["same-1", { steps: 2, ms: 5 }],
      ["same-2", { steps: 2, ms: STREAM_AFTER_MS / 2 + 100, quiet: true }],
    ] as const) {
      const fast = await answers(true, id, args);
      expect(fast.type).toContain("text/event-stream");
      expect(fast).toEqual(await answers(false, id, args));
    }
  });

  it("streams a call's log messages, then its answer", async () => {
    const token = await gw.token("val", { roles: ["viewer"] });
    const answer = await postMcp(gw.url, token, waitCall("logs-1", { steps: 2, ms: 5 }), streaming);
    expect(answer.headers.get("content-type")).toContain("text/event-stream");
    const events = (await answer.text())
      .split("\n\n")
      .filter((event) => event !== "")
      .map((event) =>
        z
          .object({ method: z.string().optional(), id: z.string().optional() })
          .parse(JSON.parse(event.replace(/^event: message\ndata: /, ""))),
      );
    expect(events.map((event) => event.method ?? event.id)).toEqual([
      "notifications/message",
      "notifications/message",
      "logs-1",
    ]);
  });

  it("opens the stream of a long call before it answers, though it has sent nothing yet", async () => {
    const token = await gw.token("val", { roles: ["viewer"] });
    const finished = (await events()).filter((e) => e === "finished").length;
    // Two quiet steps of a second: no notification at all, the answer after 2 s.
    const answer = await postMcp(
      gw.url,
      token,
      waitCall("long-1", { steps: 2, ms: 1000, quiet: true }),
      streaming,
    );
    expect(answer.headers.get("content-type")).toContain("text/event-stream");
    expect((await events()).filter((e) => e === "finished").length).toBe(finished);
    expect(await answer.text()).toContain('"id":"long-1"');
    expect((await events()).filter((e) => e === "finished").length).toBe(finished + 1);
  });
});

describe("on 2026-07-28, Writ's own answer to a plain call is the SDK's (src/mcp/modern-fast-path.ts)", () => {
  const answers = async (fast: boolean, name: string, args: Record<string, unknown>, id: string) => {
    const token = await gw.token("val", { roles: ["viewer"] });
    useFastPath(fast);
    const connected = vi.spyOn(ModernServer.prototype, "connect");
    try {
      const answer = await postModern(gw.url, token, {
        id,
        method: "tools/call",
        params: { name, arguments: args },
      });
      const text = withoutRunIds(await answer.text());
      return {
        bySdkServer: connected.mock.calls.length > 0,
        status: answer.status,
        type: answer.headers.get("content-type"),
        // server-everything stamps an embedded text resource with the time it made it.
        body: text.replace(/created at \d{1,2}:\d{2}:\d{2}( [AP]M)?/g, "created at <time>"),
      };
    } finally {
      connected.mockRestore();
      useFastPath(true);
    }
  };
  const cases: [string, string, Record<string, unknown>][] = [
    ["text", "echo", { message: "hello" }],
    ["an image", "get-tiny-image", {}],
    ["resource links", "get-resource-links", { count: 2 }],
    ["an embedded text resource", "get-resource-reference", { resourceType: "Text", resourceId: 1 }],
    ["an embedded blob resource", "get-resource-reference", { resourceType: "Blob", resourceId: 2 }],
    ["mixed, annotated content", "get-annotated-message", { messageType: "success", includeImage: true }],
    ["structured content", "get-structured-content", { location: "Chicago" }],
    ["audio", "sound", {}],
    ["a withheld secret result", "secret_sound", {}],
    ["log messages, streamed before the answer", "wait", { steps: 2, ms: 5 }],
  ];
  for (const [what, name, args] of cases) {
    it(what, async () => {
      const fast = await answers(true, name, args, `modern-${name}`);
      expect({ status: fast.status, bySdkServer: fast.bySdkServer }).toEqual({
        status: 200,
        bySdkServer: false,
      });
      const sdk = await answers(false, name, args, `modern-${name}`);
      expect(sdk.bySdkServer).toBe(true);
      expect({ ...fast, bySdkServer: true }).toEqual(sdk);
    });
  }

  it("streams log messages as the SDK does, then the answer", async () => {
    const fast = await answers(true, "wait", { steps: 2, ms: 5 }, "modern-logs");
    expect(fast.type).toBe("text/event-stream");
    const frames = fast.body.split("\n\n").filter((frame) => frame !== "");
    expect(frames.map((frame) => frame.startsWith("event: message\ndata: "))).toEqual([true, true, true]);
    expect(frames[2]).toContain('"resultType":"complete"');
  });

  it("takes a caller going away, stream open or not, as the call's cancellation and carries it to the server", async () => {
    const token = await gw.token("val", { roles: ["viewer"] });
    for (const quiet of [false, true]) {
      const before = await events();
      const abort = new AbortController();
      const pending = postModern(
        gw.url,
        token,
        {
          id: `gone-${quiet}`,
          method: "tools/call",
          params: { name: "wait", arguments: { steps: 50, ms: 40, quiet } },
          signal: abort.signal,
        },
        {},
      );
      void pending.catch(() => undefined);
      await waitFor(
        "the call to start",
        async () =>
          (await events()).filter((e) => e === "started").length >
            before.filter((e) => e === "started").length || undefined,
      );
      abort.abort();
      await waitFor(
        "the server to record the cancellation",
        async () =>
          (await events()).filter((e) => e === "cancelled").length >
            before.filter((e) => e === "cancelled").length || undefined,
      );
    }
  });
});

describe("a long call through Writ", () => {
  it("streams the server's progress while it runs", async () => {
    // Collected by a notification handler of our own: the SDK client's `onprogress` drops a
    // progress notification that arrives in the same chunk as the answer.
    const watcher = await connect(await gw.token("val", { roles: ["viewer"] }));
    try {
      const seen: Progress[] = [];
      watcher.setNotificationHandler(ProgressNotificationSchema, ({ params }) => {
        if (params.progressToken === "watch-1") seen.push(params);
      });
      const result = await watcher.callTool({
        name: "wait",
        arguments: { steps: 4, ms: 30 },
        _meta: { progressToken: "watch-1" },
      });
      expect(CallToolResultSchema.parse(result).content).toEqual([{ type: "text", text: "waited 4 steps" }]);
      expect(seen.map((p) => p.progress)).toEqual([1, 2, 3, 4]);
      expect(seen[0]).toMatchObject({ total: 4, message: "step 1" });
    } finally {
      await watcher.close();
    }
  });

  it("relays the server's log messages to the caller of the call", async () => {
    const logs: unknown[] = [];
    viewer.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
      logs.push(params.data);
    });
    await call(viewer, "wait", { steps: 2, ms: 10 });
    expect(logs).toEqual(["step 1 of 2", "step 2 of 2"]);
  });

  it("relays a reference server's progress too", async () => {
    const seen: Progress[] = [];
    await viewer.callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 0.2, steps: 2 } },
      CallToolResultSchema,
      { onprogress: (progress) => seen.push(progress), timeout: 5000 },
    );
    expect(seen.length).toBeGreaterThanOrEqual(1);
  });

  it("carries the caller's cancellation to the server", async () => {
    const before = (await events()).filter((e) => e === "cancelled").length;
    const abort = new AbortController();
    const pending = viewer.callTool(
      { name: "wait", arguments: { steps: 50, ms: 40 } },
      CallToolResultSchema,
      {
        signal: abort.signal,
        onprogress: () => abort.abort("no longer needed"),
      },
    );
    await expect(pending).rejects.toThrow();
    await waitFor(
      "the server to record the cancellation",
      async () => (await events()).filter((e) => e === "cancelled").length > before || undefined,
    );
  });

  it("on 2026-07-28, takes a caller closing its stream as the call's cancellation and carries it to the server", async () => {
    // The 2026-07-28 revision cancels over HTTP by closing the response stream, with no notice.
    const modern = await connectModernMcp(gw.url, await gw.token("val", { roles: ["viewer"] }));
    try {
      const before = (await events()).filter((e) => e === "cancelled").length;
      const abort = new AbortController();
      const pending = modern.callTool(
        { name: "wait", arguments: { steps: 50, ms: 40 } },
        { signal: abort.signal, onprogress: () => abort.abort("no longer needed") },
      );
      await expect(pending).rejects.toThrow();
      await waitFor(
        "the server to record the cancellation",
        async () => (await events()).filter((e) => e === "cancelled").length > before || undefined,
      );
    } finally {
      await modern.close();
    }
  });

  it("carries a cancellation that reached another instance to the server, through the store", async () => {
    // A second instance on the same database, without the servers: it only receives the cancellation.
    const other = await startTestGateway({
      configure: (document) => ({
        ...document,
        store: {
          ...z.record(z.string(), z.unknown()).parse(document.store),
          sqlite: path.join(dir, "shared.db"),
        },
      }),
    });
    try {
      const before = (await events()).filter((e) => e === "cancelled").length;
      const answer = await postMcp(
        gw.url,
        await gw.token("val", { roles: ["viewer"] }),
        {
          jsonrpc: "2.0",
          id: "cross-1",
          method: "tools/call",
          params: { name: "wait", arguments: { steps: 50, ms: 40 }, _meta: { progressToken: "cross" } },
        },
        { headers: { accept: "application/json, text/event-stream" } },
      );
      expect(answer.headers.get("content-type")).toContain("text/event-stream");
      const reader = answer.body?.getReader();
      if (reader === undefined) throw new Error("no body");
      let seen = "";
      while (!seen.includes("notifications/progress")) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before any progress: ${seen}`);
        seen += new TextDecoder().decode(value);
      }
      const cancel = await postMcp(other.url, await other.token("val", { roles: ["viewer"] }), {
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: "cross-1", reason: "changed my mind" },
      });
      expect(cancel.status).toBe(202);
      await waitFor(
        "the server to record the cancellation",
        async () => (await events()).filter((e) => e === "cancelled").length > before || undefined,
      );
      await reader.cancel();
    } finally {
      await other.close();
    }
  });

  it("ends the POST of a cancelled call answered as JSON, with -32800", async () => {
    const token = await gw.token("val", { roles: ["viewer"] });
    const before = (await events()).filter((e) => e === "started").length;
    const pending = postMcp(gw.url, token, {
      jsonrpc: "2.0",
      id: "json-1",
      method: "tools/call",
      params: { name: "wait", arguments: { steps: 50, ms: 40 } },
    });
    await waitFor(
      "the call to start",
      async () => (await events()).filter((e) => e === "started").length > before || undefined,
    );
    const cancel = await postMcp(gw.url, token, {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: "json-1" },
    });
    expect(cancel.status).toBe(202);
    const answer = await pending;
    const body = z
      .object({ id: z.string(), error: z.object({ code: z.number(), data: writErrorSchema }) })
      .parse(await answer.json());
    expect(body.id).toBe("json-1");
    expect(body.error.code).toBe(-32800);
  });

  it("answers a batch that calls a tool and cancels it, instead of looping (found by the fuzz harness)", async () => {
    const token = await gw.token("val", { roles: ["viewer"] });
    const answer = await postMcp(
      gw.url,
      token,
      [
        {
          jsonrpc: "2.0",
          id: "both-1",
          method: "tools/call",
          params: { name: "wait", arguments: { steps: 3, ms: 20 } },
        },
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "both-1" } },
      ],
      { signal: AbortSignal.timeout(5_000) },
    );
    expect(answer.status).toBe(200);
    const only = z
      .object({ id: z.string(), error: z.object({ code: z.number() }).passthrough() })
      .parse(await answer.json());
    expect([only.id, only.error.code]).toEqual(["both-1", -32800]);
    // The gateway still answers others.
    expect((await gw.request("GET", "/healthz")).status).toBe(200);
  });
});

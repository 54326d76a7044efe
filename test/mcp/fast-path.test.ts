/**
 * Writ answers a plain `tools/call` or `tools/list` itself (src/mcp/fast-path.ts); everything else
 * goes through the SDK's server. Both must answer alike: each message is sent twice to the same
 * gateway (in front of the notes server over Streamable HTTP), once answered by the fast path and
 * once with it turned off, and the answers (status, Content-Type, body) must be equal, byte for
 * byte once the ids and times a new decision gets are masked. The same for 2026-07-28's plain
 * `tools/call` (src/mcp/modern-fast-path.ts) against the v2 SDK's entry and per-request server;
 * content of every kind, log streams and cancellation are compared in content.test.ts.
 */
import { rm } from "node:fs/promises";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  Server as ModernServer,
} from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { useFastPath } from "../../src/mcp/fast-path.ts";
import type { TestGateway } from "../support/gateway.ts";
import { postMcp, withoutRunIds } from "../support/mcp-client.ts";
import type { NotesHttpServer } from "../support/mcp-notes-http.ts";
import { postModern } from "../support/mcp-v2-client.ts";
import { notesPolicyDir, startNotesOverHttp } from "./notes-fixture.ts";

const BOTH = { accept: "application/json, text/event-stream" };

type ModernRequest = Parameters<typeof postModern>[2];

interface Answer {
  status: number;
  type: string | null;
  body: string;
}

let gw: TestGateway;
let http: NotesHttpServer;
let policyDir: string;
let viewer: string;
let editor: string;

beforeAll(async () => {
  policyDir = await notesPolicyDir();
  ({ gw, http } = await startNotesOverHttp(policyDir));
  viewer = await gw.token("vera", { roles: ["viewer"] });
  editor = await gw.token("eddie", { roles: ["editor"] });
});

afterAll(async () => {
  useFastPath(true);
  await gw?.close();
  await http?.close();
  await rm(policyDir, { recursive: true, force: true });
});

/** The answer to one POST, and whether an SDK server answered it. */
async function send(token: string, body: unknown, headers: Record<string, string>, fast: boolean) {
  useFastPath(fast);
  const connected = vi.spyOn(Server.prototype, "connect");
  try {
    const response = await postMcp(gw.url, token, body, { headers });
    const answer: Answer = {
      status: response.status,
      type: response.headers.get("content-type"),
      body: withoutRunIds(await response.text()),
    };
    return { answer, bySdk: connected.mock.calls.length > 0 };
  } finally {
    connected.mockRestore();
    useFastPath(true);
  }
}

/**
 * The same message down both paths (`plain`: the fast path answers it, else the SDK both times):
 * the answer, once both are found equal.
 */
async function both(token: string, body: unknown, headers: Record<string, string> = BOTH, plain = true) {
  const fast = await send(token, body, headers, true);
  const sdk = await send(token, body, headers, false);
  expect(fast.answer).toEqual(sdk.answer);
  expect({ fast: !fast.bySdk, sdk: !sdk.bySdk }).toEqual({ fast: plain, sdk: false });
  return fast.answer;
}

function callOf(name: string, args: unknown, meta?: Record<string, unknown>) {
  return {
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) },
  };
}

describe("/mcp's own answer to a plain call is the SDK's answer", () => {
  it("a successful call", async () => {
    const answer = await both(viewer, callOf("read_note", { id: "n1" }));
    expect(answer.status).toBe(200);
    expect(answer.type).toBe("application/json");
    expect(JSON.parse(answer.body)).toMatchObject({
      jsonrpc: "2.0",
      id: 7,
      result: { structuredContent: { id: "n1", text: "buy milk" } },
    });
  });

  it("a successful call from a caller accepting JSON only, and one with a string id", async () => {
    await both(viewer, callOf("read_note", { id: "n2" }), { accept: "application/json" });
    await both(viewer, { ...callOf("read_note", { id: "n1" }), id: "call-1" });
  });

  it("a tool's own error", async () => {
    const answer = await both(viewer, callOf("read_note", { id: "missing" }));
    expect(JSON.parse(answer.body)).toMatchObject({ result: { isError: true } });
  });

  it("a denial, and a call waiting for approval", async () => {
    const denied = await both(viewer, callOf("delete_note", { id: "n1" }));
    expect(JSON.parse(denied.body)).toMatchObject({
      result: { isError: true, structuredContent: { decision: "deny" } },
    });
    const pending = await both(editor, callOf("publish_note", { id: "n3", text: "hello" }));
    expect(JSON.parse(pending.body)).toMatchObject({
      result: { isError: true, structuredContent: { error: { category: "approval_required" } } },
    });
  });

  it("arguments the contract refuses, and an approval id that is not a string", async () => {
    const invalid = await both(viewer, callOf("read_note", { id: "" }));
    expect(JSON.parse(invalid.body)).toMatchObject({ result: { isError: true } });
    const meta = await both(viewer, callOf("read_note", { id: "n1" }, { "writ/approval": 5 }));
    expect(JSON.parse(meta.body)).toMatchObject({ error: { code: -32602 } });
    const unknownApproval = await both(
      viewer,
      callOf("read_note", { id: "n1" }, { "writ/approval": "nope" }),
    );
    expect(JSON.parse(unknownApproval.body)).toMatchObject({ result: { isError: true } });
  });

  it("an unknown tool", async () => {
    const answer = await both(viewer, callOf("no_such_tool", {}));
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: -32602 } });
  });

  it("malformed messages and params", async () => {
    // Refused before either path (body.ts): no server is built either way.
    const refused = async (body: unknown) => {
      const fast = await send(viewer, body, BOTH, true);
      const sdk = await send(viewer, body, BOTH, false);
      expect(fast).toEqual(sdk);
      expect(fast.bySdk).toBe(false);
      expect(JSON.parse(fast.answer.body)).toMatchObject({
        error: { data: { category: "invalid_argument" } },
      });
    };
    await refused({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { arguments: {} } });
    await refused({ jsonrpc: "2.0", id: 7, method: "tools/call" });
    await refused({ jsonrpc: "1.0", id: 7, method: "tools/call", params: { name: "read_note" } });
  });

  it("an unsupported protocol version and a body that is not sent as JSON", async () => {
    const call = callOf("read_note", { id: "n1" });
    const version = await both(viewer, call, { ...BOTH, "mcp-protocol-version": "1999-01-01" }, false);
    expect(version.status).toBe(400);
    const type = await both(viewer, call, { ...BOTH, "content-type": "text/plain" }, false);
    expect(type.status).toBe(415);
    // A supported version is a plain call.
    await both(viewer, call, { ...BOTH, "mcp-protocol-version": "2025-06-18" });
  });

  it("what the fast path leaves to the SDK: a progress token, other _meta, a batch, a ping", async () => {
    const progress = await both(viewer, callOf("read_note", { id: "n1" }, { progressToken: 1 }), BOTH, false);
    expect(progress.type).toBe("application/json");
    await both(viewer, callOf("read_note", { id: "n1" }, { other: true }), BOTH, false);
    await both(viewer, [callOf("read_note", { id: "n1" })], BOTH, false);
    await both(viewer, { jsonrpc: "2.0", id: 3, method: "ping" }, BOTH, false);
  });

  it("tools/list", async () => {
    const listed = await both(viewer, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(JSON.parse(listed.body)).toMatchObject({ result: { tools: expect.any(Array) } });
    await both(editor, { jsonrpc: "2.0", id: "l", method: "tools/list", params: {} });
  });
});

/** The answer to one request, and whether a v2 SDK server answered it. */
async function sendModern(
  token: string,
  request: ModernRequest,
  headers: Record<string, string>,
  fast: boolean,
) {
  useFastPath(fast);
  const connected = vi.spyOn(ModernServer.prototype, "connect");
  try {
    const response = await postModern(gw.url, token, request, headers);
    const answer: Answer = {
      status: response.status,
      type: response.headers.get("content-type"),
      // A requestState is signed afresh for each answer (its own id).
      body: withoutRunIds(await response.text()).replace(
        /"requestState":"[^"]+"/g,
        '"requestState":"<state>"',
      ),
    };
    return { answer, bySdk: connected.mock.calls.length > 0 };
  } finally {
    connected.mockRestore();
    useFastPath(true);
  }
}

/**
 * The same request down both ways, the answer once both are found equal. `by`: who answers it
 * with the fast paths on: Writ itself, the SDK's per-request server, or the SDK's entry, which
 * refuses it before any server is built.
 */
async function bothModern(
  token: string,
  request: ModernRequest,
  headers: Record<string, string> = {},
  by: "writ" | "sdk-server" | "sdk-entry" = "writ",
) {
  const fast = await sendModern(token, request, headers, true);
  const sdk = await sendModern(token, request, headers, false);
  expect(fast.answer).toEqual(sdk.answer);
  if (by === "sdk-entry") {
    expect({ fast: fast.bySdk, sdk: sdk.bySdk, status: fast.answer.status }).toEqual({
      fast: false,
      sdk: false,
      status: 400,
    });
  } else {
    expect({ fast: fast.bySdk, sdk: sdk.bySdk }).toEqual({ fast: by === "sdk-server", sdk: true });
  }
  return { ...fast.answer, json: JSON.parse(fast.answer.body) as unknown };
}

function modernCallOf(name: string, args?: unknown, extra: Partial<ModernRequest> = {}): ModernRequest {
  return {
    id: 7,
    method: "tools/call",
    params: { name, ...(args === undefined ? {} : { arguments: args }) },
    ...extra,
  };
}

describe("/mcp's own answer to a plain 2026-07-28 call is the SDK's answer", () => {
  it("a successful call, with a number id and with a string id, and one accepting JSON only", async () => {
    const answer = await bothModern(viewer, modernCallOf("read_note", { id: "n1" }));
    expect(answer.status).toBe(200);
    expect(answer.type).toBe("application/json");
    expect(answer.json).toMatchObject({
      jsonrpc: "2.0",
      id: 7,
      result: {
        structuredContent: { id: "n1", text: "buy milk" },
        resultType: "complete",
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "writ", version: "0.1.0" } },
      },
    });
    await bothModern(viewer, modernCallOf("read_note", { id: "n2" }, { id: "call-1" }));
    await bothModern(viewer, modernCallOf("read_note", { id: "n1" }), { accept: "application/json" });
  });

  it("a tool's own error, and a tool called without arguments", async () => {
    const missing = await bothModern(viewer, modernCallOf("read_note", { id: "missing" }));
    expect(missing.json).toMatchObject({ result: { isError: true } });
    const bare = await bothModern(viewer, modernCallOf("read_note"));
    expect(bare.json).toMatchObject({ result: { isError: true } });
  });

  it("a denial, and arguments the contract refuses", async () => {
    const denied = await bothModern(viewer, modernCallOf("delete_note", { id: "n1" }));
    expect(denied.json).toMatchObject({ result: { isError: true, structuredContent: { decision: "deny" } } });
    const invalid = await bothModern(viewer, modernCallOf("read_note", { id: "" }));
    expect(invalid.json).toMatchObject({ result: { isError: true } });
  });

  it("a call waiting for approval: a tool error, or input_required to a client taking URL elicitations", async () => {
    const pending = await bothModern(editor, modernCallOf("publish_note", { id: "n3", text: "hello" }));
    expect(pending.json).toMatchObject({
      result: { isError: true, structuredContent: { error: { category: "approval_required" } } },
    });
    const elicits = { meta: { [CLIENT_CAPABILITIES_META_KEY]: { elicitation: { url: {} } } } };
    const round = await bothModern(editor, modernCallOf("publish_note", { id: "n4", text: "hi" }, elicits));
    expect(round.json).toMatchObject({
      result: { resultType: "input_required", requestState: expect.any(String) },
    });
  });

  it("an unknown tool", async () => {
    const answer = await bothModern(viewer, modernCallOf("no_such_tool", {}));
    expect(answer.json).toMatchObject({ error: { code: -32602, data: { error: expect.any(Object) } } });
  });

  it("what it leaves to the SDK: other _meta, retry fields, the tasks extension, headers it must decode or refuse", async () => {
    const read = (extra: Partial<ModernRequest>) => modernCallOf("read_note", { id: "n1" }, extra);
    await bothModern(viewer, read({ meta: { progressToken: 1 } }), {}, "sdk-server");
    await bothModern(viewer, read({ meta: { [LOG_LEVEL_META_KEY]: "debug" } }), {}, "sdk-server");
    await bothModern(viewer, read({ meta: { "writ/approval": "nope" } }), {}, "sdk-server");
    await bothModern(
      viewer,
      read({ meta: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" } }),
      {},
      "sdk-server",
    );
    const tasks = { [CLIENT_CAPABILITIES_META_KEY]: { extensions: { "io.modelcontextprotocol/tasks": {} } } };
    await bothModern(viewer, read({ meta: tasks }), {}, "sdk-server");
    const state = modernCallOf("read_note", { id: "n1" });
    await bothModern(viewer, { ...state, params: { ...state.params, requestState: "x" } }, {}, "sdk-server");
    // The tool's name in Base64, as the SDK's client sends a name a header cannot carry.
    const encoded = `=?base64?${Buffer.from("read_note").toString("base64")}?=`;
    await bothModern(viewer, read({}), { "mcp-name": encoded }, "sdk-server");
    await bothModern(viewer, read({}), { "mcp-name": "delete_note" }, "sdk-entry");
    await bothModern(viewer, read({}), { "mcp-protocol-version": "" }, "sdk-entry");
    await bothModern(viewer, read({}), { "mcp-method": "" }, "sdk-entry");
  });
});

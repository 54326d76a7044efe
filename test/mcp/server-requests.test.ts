/**
 * An upstream's requests to the client while a call runs (sampling, elicitation, roots), forwarded
 * to a 2025-11-25 caller on the call's stream once the policy allows them (`mcp.sampling`,
 * `mcp.elicitation`, `mcp.roots`, logged), the answer back in a POST of its own; and `completion/complete`,
 * asked of the server owning a prompt the caller is shown. The upstream is the conformance
 * suite's reference server over Streamable HTTP; the callers are real v2 `Client`s (2025-11-25,
 * and one 2026-07-28) and raw HTTP. alice may call everything and be asked; bob may call the
 * tools only, and is never asked.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client, ProtocolError, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestGateway, type TestGateway, waitForMcpServers } from "../support/gateway.ts";
import { postMcp } from "../support/mcp-client.ts";
import { type ConformanceHttpServer, startConformanceHttpServer } from "../support/mcp-conformance-server.ts";
import { connectModernMcp } from "../support/mcp-v2-client.ts";
import { withConformanceServer } from "./conformance-fixture.ts";

const POLICY = `package writ

import rego.v1

default decision := {"decision": "deny", "reasons": [{"code": "no_rule_allows", "message": "no policy rule allows this action", "visible_to_model": true}]}

decision := {"decision": "allow", "reasons": [], "grant": {"ttl_seconds": 60, "max_uses": 1}} if {
	startswith(input.action.name, "conformance.")
	input.subject.id == "alice"
}

decision := {"decision": "allow", "reasons": [], "grant": {"ttl_seconds": 60, "max_uses": 1}} if {
	startswith(input.action.name, "conformance.test_")
	input.subject.id == "bob"
}

decision := {"decision": "allow", "reasons": []} if {
	input.action.name in {"mcp.sampling", "mcp.elicitation", "mcp.roots"}
	input.action.args.server == "conformance"
	input.subject.id == "alice"
}
`;

let dir: string;
let upstream: ConformanceHttpServer;
let gw: TestGateway;
const clients: Client[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "writ-server-requests-"));
  await mkdir(path.join(dir, "writ"));
  await writeFile(path.join(dir, "writ", "decision.rego"), POLICY);
  upstream = await startConformanceHttpServer();
  const server = { transport: "http", url: upstream.url, protocol_version: "2025-11-25" };
  gw = await startTestGateway({ configure: withConformanceServer(server, dir) });
  await waitForMcpServers(gw);
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await gw?.close();
  await upstream?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A 2025-11-25 caller that declares sampling and elicitation. */
async function connectLegacy(subject: string): Promise<Client> {
  const client = new Client(
    { name: "server-requests-test", version: "1.0.0" },
    {
      capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} },
      versionNegotiation: { mode: "legacy" },
    },
  );
  const headers = { authorization: `Bearer ${await gw.token(subject)}` };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers } }),
  );
  clients.push(client);
  return client;
}

const textOf = (result: { content?: unknown }) =>
  z.array(z.object({ text: z.string() })).parse(result.content)[0]?.text;

const entrySchema = z.object({
  subject: z.string(),
  decision: z.string(),
  input: z.object({ action: z.object({ args: z.record(z.string(), z.unknown()) }) }),
});

/** The decision log's entries for `action`, newest first. */
async function logged(action: string): Promise<z.infer<typeof entrySchema>[]> {
  const token = await gw.token("rita", { roles: ["reviewer"] });
  const answer = await gw.request("GET", `/v1/decisions?action=${action}`, { token });
  return z.object({ entries: z.array(entrySchema) }).parse(answer.json).entries;
}

describe("an upstream's requests to a 2025-11-25 caller", () => {
  it("asks the caller of the call once the policy allows it, logs it, and takes the answer only from that caller", async () => {
    const alice = await connectLegacy("alice");
    const ids: unknown[] = [];
    let foreign: Response | undefined;
    const bobToken = await gw.token("bob");
    alice.setRequestHandler("sampling/createMessage", async (request, ctx) => {
      ids.push(ctx.mcpReq.id);
      // bob answers alice's request first: refused, and alice's answer still counts.
      const result = { role: "assistant", content: { type: "text", text: "bob's" }, model: "m" };
      foreign = await postMcp(gw.url, bobToken, { jsonrpc: "2.0", id: ctx.mcpReq.id, result });
      expect(request.params.messages).toEqual([{ role: "user", content: { type: "text", text: "say hi" } }]);
      return { role: "assistant", content: { type: "text", text: "hi from alice's model" }, model: "m" };
    });
    const result = await alice.callTool({ name: "test_sampling", arguments: { prompt: "say hi" } });
    expect(textOf(result)).toBe("LLM response: hi from alice's model");
    expect(ids).toEqual([expect.stringMatching(/^writ-[0-9a-f-]{36}$/)]);
    expect(foreign?.status).toBe(400);
    expect(await foreign?.json()).toMatchObject({ id: null, error: { data: { category: "not_found" } } });
    const [entry] = await logged("mcp.sampling");
    expect(entry).toMatchObject({ subject: "alice", decision: "allow" });
    expect(entry?.input.action.args).toMatchObject({
      server: "conformance",
      tool: "conformance.test_sampling",
    });
  }, 30_000);

  it("answers the server with the policy's refusal, without asking the caller", async () => {
    const bob = await connectLegacy("bob");
    let asked = false;
    bob.setRequestHandler("sampling/createMessage", async () => {
      asked = true;
      return { role: "assistant", content: { type: "text", text: "never" }, model: "m" };
    });
    const result = await bob.callTool({ name: "test_sampling", arguments: { prompt: "say hi" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/-1.*sampling\/createMessage: no policy rule allows this action/);
    expect(asked).toBe(false);
    expect((await logged("mcp.sampling")).filter((e) => e.subject === "bob")).toMatchObject([
      { decision: "deny" },
    ]);
  }, 30_000);

  it("forwards an elicitation and a roots request on a stream, and refuses at once a caller reading JSON only", async () => {
    const alice = await connectLegacy("alice");
    alice.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { username: "alice", email: "alice@example.com" },
    }));
    // With a progress token: answered by the per-POST SDK server rather than the fast path.
    const accepted = await alice.callTool(
      { name: "test_elicitation", arguments: { message: "who?" } },
      { onprogress: () => undefined },
    );
    expect(textOf(accepted)).toBe(
      'Elicitation completed: action=accept, content={"username":"alice","email":"alice@example.com"}',
    );
    alice.setRequestHandler("roots/list", async () => ({ roots: [{ uri: "file:///work", name: "work" }] }));
    expect(textOf(await alice.callTool({ name: "test_roots", arguments: {} }))).toBe("roots: file:///work");
    const asJson = await postMcp(gw.url, await gw.token("alice"), {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "test_elicitation", arguments: { message: "who?" } },
    });
    expect(asJson.headers.get("content-type")).toContain("application/json");
    const answer = z
      .object({ result: z.object({ isError: z.boolean(), content: z.unknown() }) })
      .parse(await asJson.json());
    expect(answer.result.isError).toBe(true);
    expect(textOf(answer.result)).toMatch(/-32601.*answer as JSON, so it cannot be asked/);
  }, 30_000);

  it("refuses at once a 2026-07-28 caller's server request (it is asked through input_required instead)", async () => {
    const modern = await connectModernMcp(gw.url, await gw.token("alice"));
    clients.push(modern);
    const result = await modern.callTool({ name: "test_sampling", arguments: { prompt: "say hi" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/-32601.*the caller of conformance\.test_sampling cannot take it/);
  }, 30_000);
});

describe("completion/complete", () => {
  it("asks the server owning a prompt the caller is shown, and answers any other as unknown", async () => {
    const alice = await connectLegacy("alice");
    const ref = { type: "ref/prompt", name: "test_prompt_with_arguments" } as const;
    const completed = await alice.complete({ ref, argument: { name: "arg1", value: "pa" } });
    expect(completed.completion.values).toEqual(["paris", "park", "party"]);
    const bob = await connectLegacy("bob");
    const hidden = await bob
      .complete({ ref, argument: { name: "arg1", value: "pa" } })
      .catch((e: unknown) => e);
    const unknown = await alice
      .complete({ ref: { type: "ref/prompt", name: "no_such_prompt" }, argument: { name: "a", value: "" } })
      .catch((e: unknown) => e);
    for (const refused of [hidden, unknown]) {
      expect(refused).toBeInstanceOf(ProtocolError);
      expect(refused).toMatchObject({ code: -32602, data: { error: { category: "not_found" } } });
    }
  }, 30_000);
});

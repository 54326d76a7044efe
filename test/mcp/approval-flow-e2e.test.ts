/**
 * Approvals in the protocol, end to end: a real v2 SDK `Client` (2026-07-28, with an elicitation
 * handler) against a real gateway on loopback. A call that needs approval reaches the handler as
 * a URL elicitation to the approval's console page; the handler has an approver decide it
 * through the HTTP API; the client's own retry (with the state) then runs the call once, or
 * answers the refusal. A state tampered with on the wire is refused -32602 with Writ's error.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  Client,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import { logEntries, readForEdit, WS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { connectModernMcp, MODERN_REVISION, postModern } from "../support/mcp-v2-client.ts";

const SUM = "src/sum.ts";
const approvalListSchema = z.object({
  approvals: z.array(
    z.object({
      id: z.string(),
      requester: z.object({ id: z.string() }),
      tool: z.object({ name: z.string() }),
    }),
  ),
});
const refusalSchema = z.object({
  isError: z.literal(true),
  structuredContent: z.object({ error: writErrorSchema }).passthrough(),
});

let gw: TestGateway;
let alice: string;
let carol: string;
beforeAll(async () => {
  gw = await startTestGateway();
  alice = await gw.token("alice");
  carol = await gw.token("carol", { roles: ["maintainer"] });
}, 60_000);
afterAll(() => gw?.close());

/** What the elicitation handler saw and did. */
interface Seen {
  url: string;
  message: string;
  approvalId: string;
}

/**
 * alice's v2 client, pinned to 2026-07-28, declaring URL elicitation; its handler has carol
 * `decide` the approval the URL names (through the HTTP API), then accepts.
 */
async function aliceClient(decide: "approve" | "reject", seen: Seen[]): Promise<Client> {
  const client = new Client(
    { name: "writ-approval-e2e", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: MODERN_REVISION } }, capabilities: { elicitation: { url: {} } } },
  );
  client.setRequestHandler("elicitation/create", async (request) => {
    const params = z
      .object({ mode: z.literal("url"), url: z.string(), message: z.string() })
      .parse(request.params);
    const pending = await gw.request("GET", "/v1/approvals?status=pending", { token: carol });
    const mine = approvalListSchema
      .parse(pending.json)
      .approvals.filter((a) => a.requester.id === "alice" && params.url.endsWith(`#approval-${a.id}`));
    expect(mine).toHaveLength(1);
    const approvalId = mine[0]?.id ?? "";
    seen.push({ url: params.url, message: params.message, approvalId });
    const decided = await gw.request("POST", `/v1/approvals/${approvalId}/${decide}`, {
      token: carol,
      body: decide === "approve" ? {} : { reason: "not this one" },
    });
    expect(decided.status, decided.text).toBe(200);
    return { action: "accept" };
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${alice}` } },
    }),
  );
  return client;
}

async function editArgs(before: string, after: string) {
  return { workspace: WS, path: SUM, base_hash: await readForEdit(gw, alice, SUM), before, after };
}

describe("a call that needs approval, through a v2 client's elicitation handler", () => {
  it("reaches the handler as the approval's console page; the retry runs the call once", async () => {
    const seen: Seen[] = [];
    const client = await aliceClient("approve", seen);
    try {
      expect(client.getProtocolEra()).toBe("modern");
      const args = await editArgs("a - b", "a + b");
      const result = await client.callTool({ name: "repo_apply_edit", arguments: args });
      expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();

      expect(seen).toHaveLength(1);
      const [{ url, message, approvalId } = { url: "", message: "", approvalId: "" }] = seen;
      expect(url).toBe(`${gw.url}/console/approvals#approval-${approvalId}`);
      expect(message).toContain("maintainer");
      expect(message).toContain(approvalId);
      // The backend ran the edit once.
      expect(await gw.repository.read(SUM)).toBe("export const sum = (a: number, b: number) => a + b;\n");

      // The log has the approval (its decision, and its grant collected) and the one execution.
      const ofApproval = await logEntries(gw, { approval_id: approvalId });
      const collected = ofApproval.find((e) => e.path === "writ/approvals" && e.decision === "allow");
      expect(collected?.grant_jti).toEqual(expect.any(String));
      expect(ofApproval.map((e) => e.decision)).toContain("require_approval");
      const executed = (await logEntries(gw, { path: "writ/execute" })).filter(
        (e) => e.grant_jti === collected?.grant_jti,
      );
      expect(executed.map((e) => e.decision)).toEqual(["allow"]);
    } finally {
      await client.close();
    }
  });

  it("answers the refusal once the approver rejects it", async () => {
    const seen: Seen[] = [];
    const client = await aliceClient("reject", seen);
    try {
      const args = await editArgs("a + b", "b + a");
      const result = refusalSchema.parse(await client.callTool({ name: "repo_apply_edit", arguments: args }));
      expect(result.structuredContent.error.category).toBe("policy_denied");
      expect(result.structuredContent.error.message).toContain("rejected");
      expect(seen).toHaveLength(1);
      expect(await gw.repository.read(SUM)).toBe("export const sum = (a: number, b: number) => a + b;\n");
    } finally {
      await client.close();
    }
  });

  it("refuses a requestState tampered with on the wire: -32602 with Writ's error, logged", async () => {
    const args = await editArgs("a + b", "a + b + 0");
    const params = { name: "repo_apply_edit", arguments: args };
    const meta = { [CLIENT_CAPABILITIES_META_KEY]: { elicitation: { url: {} } } };
    const first = await postModern(gw.url, alice, { method: "tools/call", params, meta });
    const round = z
      .object({ result: z.object({ resultType: z.literal("input_required"), requestState: z.string() }) })
      .parse(await first.json());
    const [header, payload, signature] = round.result.requestState.split(".");
    const forged = `${header}.${payload}.${signature?.startsWith("A") ? "B" : "A"}${signature?.slice(1)}`;
    const retry = await postModern(gw.url, alice, {
      id: 2,
      method: "tools/call",
      params: { ...params, requestState: forged, inputResponses: { writ_approval: { action: "accept" } } },
      meta,
    });
    const answer = z
      .object({
        error: z.object({ code: z.number(), data: z.object({ error: writErrorSchema }).passthrough() }),
      })
      .parse(await retry.json());
    expect(answer.error.code).toBe(-32602);
    expect(answer.error.data.error.category).toBe("invalid_argument");
    expect(answer.error.data.error.message).toContain("requestState");
    const refused = (await logEntries(gw, { path: "writ/intake" })).filter((e) => e.subject === "alice");
    expect(refused.map((e) => e.error)).toContain("invalid_argument");
  });

  it("answers a v2 client that declares no URL elicitation as on 2025-11-25", async () => {
    const client = await connectModernMcp(gw.url, alice);
    try {
      const args = await editArgs("a + b", "a + b + 1");
      const result = refusalSchema.parse(await client.callTool({ name: "repo_apply_edit", arguments: args }));
      expect(result.structuredContent.error.category).toBe("approval_required");
      expect(result.structuredContent.error.suggested_fix).toContain("writ/approval");
    } finally {
      await client.close();
    }
  });
});

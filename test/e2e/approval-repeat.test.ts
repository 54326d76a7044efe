/**
 * A slow agent keeps the human's decision: the identical call proposed again gets its open
 * approval back (HTTP API and MCP), the grant is minted when the requester collects it, and
 * collecting it twice never runs the call twice.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { connectMcp } from "../support/mcp-client.ts";
import { canonicalCall, grantViewSchema, logEntry, onlyOutcome, readForEdit, WS } from "./api.ts";

const SUM = "src/sum.ts";
const collectedSchema = z.object({ status: z.string(), grant: grantViewSchema.optional() });
const toolErrorSchema = z
  .object({
    error: writErrorSchema,
    approval: z.object({ id: z.string(), status: z.string() }).passthrough().optional(),
  })
  .passthrough();

let gw: TestGateway;
let alice: string;
let carol: string;
let mcp: Client | undefined;

beforeAll(async () => {
  gw = await startTestGateway();
  alice = await gw.token("alice");
  carol = await gw.token("carol", { roles: ["maintainer"] });
});
afterAll(async () => {
  await mcp?.close();
  await gw?.close();
});

/** alice reads sum.ts (so the workspace records its hash): the edit that replaces `before`. */
async function editOf(before: string, after: string) {
  return { workspace: WS, path: SUM, base_hash: await readForEdit(gw, alice, SUM), before, after };
}

const approve = (id: string) => gw.request("POST", `/v1/approvals/${id}/approve`, { token: carol, body: {} });

describe("over the HTTP API", () => {
  it("the same edit proposed again returns its approval; collected twice, it runs once", async () => {
    const args = await editOf("a - b", "a + b");
    const propose = async () =>
      onlyOutcome(
        await gw.propose(alice, { format: "canonical", payload: canonicalCall("repo_apply_edit", args) }),
      );
    const first = await propose();
    const id = z.string().parse(first.approval?.id);
    const again = await propose();
    expect(again).toMatchObject({ decision: "require_approval", approval: { id, status: "pending" } });
    expect(await logEntry(gw, again.decision_id)).toMatchObject({
      decision: "require_approval",
      approval_id: id,
    });

    expect((await approve(id)).status).toBe(200);
    const approved = await propose();
    expect(approved).toMatchObject({
      approval: { id, status: "approved" },
      error: { category: "approval_required" },
    });
    expect(await logEntry(gw, approved.decision_id)).toMatchObject({ approval_id: id });

    const collect = async () => {
      const answer = await gw.request("GET", `/v1/approvals/${id}`, { token: alice });
      expect(answer.status, answer.text).toBe(200);
      return collectedSchema.parse(answer.json).grant;
    };
    const grant = await collect();
    if (!grant) throw new Error("no grant collected");
    expect(await collect()).toEqual(grant);
    // Once collected, proposing it again asks for a new approval.
    const later = await propose();
    expect(later.approval?.id).toBeDefined();
    expect(later.approval?.id).not.toBe(id);
    const run = () =>
      gw.request("POST", "/v1/execute", {
        token: alice,
        body: { grant: grant.token, tool: "repo_apply_edit", arguments: args },
      });
    expect((await run()).status).toBe(200);
    const twice = await run();
    expect(twice.status, twice.text).toBe(403);
    expect(await gw.repository.read(SUM)).toBe("export const sum = (a: number, b: number) => a + b;\n");
  });
});

describe("over MCP", () => {
  it("the same tools/call returns its approval; the repeat call with the approval runs once", async () => {
    mcp = await connectMcp(gw.url, alice);
    const client = mcp;
    const args = await editOf("a + b", "b + a");
    const call = async (meta?: Record<string, unknown>) =>
      CallToolResultSchema.parse(
        await client.callTool({ name: "repo_apply_edit", arguments: args, ...(meta ? { _meta: meta } : {}) }),
      );
    const errorOf = (result: z.infer<typeof CallToolResultSchema>) => {
      expect(result.isError).toBe(true);
      return toolErrorSchema.parse(result.structuredContent);
    };
    const first = errorOf(await call());
    expect(first.error.category).toBe("approval_required");
    const id = z.string().parse(first.approval?.id);
    expect(errorOf(await call()).approval).toMatchObject({ id, status: "pending" });

    expect((await approve(id)).status).toBe(200);
    expect(errorOf(await call()).approval).toMatchObject({ id, status: "approved" });

    const done = await call({ "writ/approval": id });
    expect(done.isError, JSON.stringify(done.structuredContent)).toBeFalsy();
    expect(errorOf(await call({ "writ/approval": id })).error.category).toBe("policy_denied");
    expect(await gw.repository.read(SUM)).toBe("export const sum = (a: number, b: number) => b + a;\n");
  });
});

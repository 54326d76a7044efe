/**
 * The red team's reproduction (issue 27, defect 1), over real HTTP and MCP, on SQLite and on
 * PostgreSQL: alice's apply_edit on ws-demo needs approval; a maintainer approves; an admin hands
 * the workspace to mallory; alice's grant (collected before or after the move) never runs the
 * edit, nor does a plain read grant within its TTL. Each refusal is `stale_revision` with
 * `effect_committed: false`, on the log's chain, and tells alice to propose again.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import { DEMO_FILES } from "../../src/demo/repository.ts";
import type { TestGateway } from "../support/gateway.ts";
import { connectMcp } from "../support/mcp-client.ts";
import { postgresUnavailable } from "../support/postgres.ts";
import { type StoreKind, startGatewayOn } from "../support/store-gateway.ts";
import {
  canonicalCall,
  errorOf,
  expectLogVerifies,
  grantViewSchema,
  logEntries,
  onlyOutcome,
  readForEdit,
  WS,
} from "./api.ts";

const SUM = "src/sum.ts";
const approvalSchema = z
  .object({
    id: z.string(),
    status: z.string(),
    resolution: z.string().nullable(),
    reasons: z.array(z.object({ code: z.string(), message: z.string() })),
    grant: grantViewSchema.optional(),
  })
  .passthrough();

const kinds: StoreKind[] = ["sqlite", "postgres"];

describe.each(kinds)("grants bound to the workspace's revision, on %s", (kind) => {
  const skip = kind === "postgres" && postgresUnavailable !== undefined;
  let stop: (() => Promise<void>) | undefined;
  let gw: TestGateway;
  let alice: string;
  let carol: string;
  let admin: string;
  let mcp: Client | undefined;

  beforeAll(async () => {
    if (skip) return;
    ({ gw, stop } = await startGatewayOn(kind, "writ_stale"));
    alice = await gw.token("alice");
    carol = await gw.token("carol", { roles: ["maintainer"] });
    admin = await gw.token("root", { roles: ["admin"] });
  }, 60_000);
  afterAll(async () => {
    await mcp?.close();
    await stop?.();
  });
  afterEach(async () => {
    if (skip) return;
    // Each test starts from alice's workspace with the demo's files.
    await handTo("alice");
    await gw.repository.write(SUM, DEMO_FILES[SUM] ?? "");
  });

  async function handTo(owner: string): Promise<void> {
    const current = await gw.request("GET", `/v1/resources/workspace/${WS}`, { token: admin });
    const attributes = z
      .object({ attributes: z.record(z.string(), z.unknown()) })
      .parse(current.json).attributes;
    const put = await gw.request("PUT", `/v1/resources/workspace/${WS}`, {
      token: admin,
      body: { owner, attributes },
    });
    expect(put.status, put.text).toBe(200);
  }

  /** alice reads sum.ts (the workspace records its hash) and proposes the fix: approval needed. */
  async function pendingEdit(): Promise<{ id: string; args: Record<string, unknown> }> {
    const base_hash = await readForEdit(gw, alice, SUM);
    const args = { workspace: WS, path: SUM, base_hash, before: "a - b", after: "a + b" };
    const proposed = onlyOutcome(
      await gw.propose(alice, { format: "canonical", payload: canonicalCall("repo_apply_edit", args) }),
    );
    expect(proposed.decision).toBe("require_approval");
    return { id: z.string().parse(proposed.approval?.id), args };
  }

  async function approve(id: string): Promise<void> {
    const answer = await gw.request("POST", `/v1/approvals/${id}/approve`, { token: carol, body: {} });
    expect(answer.status, answer.text).toBe(200);
  }

  async function collect(id: string) {
    const answer = await gw.request("GET", `/v1/approvals/${id}`, { token: alice });
    expect(answer.status, answer.text).toBe(200);
    return approvalSchema.parse(answer.json);
  }

  const execute = (grant: string, tool: string, args: Record<string, unknown>) =>
    gw.request("POST", "/v1/execute", { token: alice, body: { grant, tool, arguments: args } });

  it.skipIf(skip)("an approval collected after the workspace changed hands releases no grant", async () => {
    const { id } = await pendingEdit();
    await approve(id);
    await handTo("mallory");
    const approval = await collect(id);
    expect(approval).toMatchObject({ status: "rejected", resolution: "stale_revision" });
    expect(approval.grant).toBeUndefined();
    expect(approval.reasons[0]?.message).toMatch(/changed since approval .* was approved/);
    expect(await gw.repository.read(SUM)).toBe(DEMO_FILES[SUM]);
    const transitions = (await logEntries(gw, { action: "repo.apply_edit" })).filter(
      (e) => e.approval_id === id && e.error === "stale_revision",
    );
    expect(transitions).toHaveLength(1);
    await expectLogVerifies(gw);
  });

  it.skipIf(skip)("an approval's grant collected before the move is refused at execution", async () => {
    const { id, args } = await pendingEdit();
    await approve(id);
    const grant = (await collect(id)).grant;
    if (!grant) throw new Error("no grant collected");
    await handTo("mallory");
    const error = errorOf(await execute(grant.token, "repo_apply_edit", args), 409);
    expect(error).toMatchObject({ category: "stale_revision", effect_committed: false });
    expect(error.suggested_fix).toMatch(/propose the call again/);
    // The edit did not land on mallory's workspace.
    expect(await gw.repository.read(SUM)).toBe(DEMO_FILES[SUM]);
    const [refused] = await logEntries(gw, { path: "writ/execute", reason: "stale_revision" });
    expect(refused).toMatchObject({ decision: "deny", grant_jti: grant.jti, subject: "alice" });
    await expectLogVerifies(gw);
  });

  it.skipIf(skip)(
    "a plain read grant within its TTL is refused once the workspace changed hands",
    async () => {
      const args = { workspace: WS, path: "README.md" };
      const proposed = onlyOutcome(
        await gw.propose(alice, { format: "canonical", payload: canonicalCall("repo_read", args) }),
      );
      const token = z.string().parse(proposed.grant?.token);
      await handTo("mallory");
      expect(errorOf(await execute(token, "repo_read", args), 409)).toMatchObject({
        category: "stale_revision",
        effect_committed: false,
      });
      // Handed back to alice, the grant is still stale: a revision never comes back.
      await handTo("alice");
      expect((await execute(token, "repo_read", args)).status).toBe(409);
    },
  );

  it.skipIf(skip)(
    "the MCP repeat call of an approval whose workspace moved is a stale_revision tool error",
    async () => {
      const { id, args } = await pendingEdit();
      await approve(id);
      await handTo("mallory");
      mcp ??= await connectMcp(gw.url, alice);
      const result = CallToolResultSchema.parse(
        await mcp.callTool({ name: "repo_apply_edit", arguments: args, _meta: { "writ/approval": id } }),
      );
      expect(result.isError).toBe(true);
      const body = z.object({ error: writErrorSchema }).passthrough().parse(result.structuredContent);
      expect(body.error).toMatchObject({ category: "stale_revision", effect_committed: false });
      expect(await gw.repository.read(SUM)).toBe(DEMO_FILES[SUM]);
    },
  );
});

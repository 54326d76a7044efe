/** The stages composed: handleProposal and executeWithGrant, without an HTTP server. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WritError } from "../../src/core/errors.ts";
import type { InProcessHandler } from "../../src/core/handlers.ts";
import { parseProposal } from "../../src/intake/index.ts";
import { executeWithGrant, handleProposal } from "../../src/pipeline/index.ts";
import { type UnitGateway, unitGateway } from "./harness.ts";

let u: UnitGateway;
beforeEach(async () => {
  u = await unitGateway();
});
afterEach(async () => {
  await u.close();
});

describe("handleProposal", () => {
  it("decides each call on its own, logging one entry per call before answering", async () => {
    const outcomes = await handleProposal(u.gw, {
      authorization: await u.bearer("alice"),
      format: "canonical",
      payload: { tool: "notes_read", arguments: { note: "n1" } },
      execute: true,
      requestId: "r1",
    });
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({
      decision: "allow",
      result: { structured_content: { args: { note: "n1" } } },
    });
    expect(u.runs.count).toBe(1);
    const [entry] = await u.entries();
    expect(entry).toMatchObject({
      decision_id: outcomes[0]?.decision_id,
      decision: "allow",
      grant_jti: outcomes[0]?.grant?.jti,
    });
  });

  it("logs a proposal's execution as POST /v1/execute does: what ran, and a tool that failed", async () => {
    const notes: InProcessHandler = async ({ args }) => {
      if (args.text === "fail")
        throw new WritError("backend_error", "the notes service is down", { suggestedFix: "try later" });
      return { summary: "ok", structured_content: { ok: true } };
    };
    u.gw.handlers = new Map([["notes", notes]]);
    const propose = async (args: Record<string, unknown>, requestId: string) => {
      const [outcome] = await handleProposal(u.gw, {
        authorization: await u.bearer("alice"),
        format: "canonical",
        payload: { tool: "notes_read", arguments: args },
        execute: true,
        requestId,
      });
      return outcome;
    };
    const ran = await propose({ note: "n1" }, "r1");
    const failed = await propose({ note: "n1", text: "fail" }, "r2");
    expect(ran?.result?.structured_content).toEqual({ ok: true });
    expect(failed?.error?.category).toBe("backend_error");
    const executions = (await u.entries()).filter((e) => e.path === "writ/execute");
    expect(executions.map((e) => [e.request_id, e.decision, e.error])).toEqual([
      ["r1", "allow", null],
      ["r2", "error", "backend_error"],
    ]);
    // The grant each ran with, verified: a run that failed after its grant was checked names it too.
    expect(executions[0]?.grant_jti).toBe(ran?.grant?.jti);
    expect(executions[1]?.grant_jti).toBe(failed?.grant?.jti);
    expect(executions[1]?.input).toMatchObject({ grant: { jti: failed?.grant?.jti, verified: true } });
    expect(executions[0]?.input).toMatchObject({ tool: "notes_read", result: { structured_keys: 1 } });
  });

  it("answers a denial with the visible reasons only, and an invalid call without the policy", async () => {
    const payload = { tool: "notes_secret", arguments: { note: "n1" } };
    const [denied] = await handleProposal(u.gw, {
      authorization: await u.bearer("alice"),
      format: "canonical",
      payload,
      execute: true,
      requestId: "r2",
    });
    expect(denied).toMatchObject({ decision: "deny", error: { category: "policy_denied" } });
    expect(denied?.reasons.map((r) => r.code)).toEqual(["no_rule"]);
    const [invalid] = await handleProposal(u.gw, {
      authorization: await u.bearer("alice"),
      format: "canonical",
      payload: { tool: "notes_read", arguments: { note: 7 } },
      execute: false,
      requestId: "r3",
    });
    expect(invalid).toMatchObject({ decision: "error", error: { category: "invalid_argument" } });
    expect((await u.entries()).map((e) => e.decision)).toEqual(["deny", "error"]);
    expect(u.runs.count).toBe(0);
  });

  it("takes the calls an entrance read already (proposed) as they are, without reading the payload again", async () => {
    // /mcp's body check reads a tools/call with the MCP intake adapter; the calls go on as read.
    const message = {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "notes_read", arguments: { note: "n1" } },
    };
    const { calls } = parseProposal("mcp", message);
    const [outcome] = await handleProposal(u.gw, {
      authorization: await u.bearer("alice"),
      format: "mcp",
      payload: null,
      proposed: calls,
      execute: true,
      requestId: "r-proposed",
    });
    expect(outcome).toMatchObject({
      call_id: "7",
      decision: "allow",
      result: { structured_content: { args: { note: "n1" } } },
    });
    expect(u.runs.count).toBe(1);
  });

  it("refuses an unauthenticated request whole, each call logged", async () => {
    await expect(
      handleProposal(u.gw, {
        authorization: undefined,
        format: "canonical",
        payload: { tool: "notes_read", arguments: { note: "n1" } },
        execute: false,
        requestId: "r4",
      }),
    ).rejects.toMatchObject({ category: "unauthenticated" });
    expect((await u.entries()).map((e) => [e.decision, e.error])).toEqual([["error", "unauthenticated"]]);
  });
});

describe("executeWithGrant", () => {
  it("runs a call with the grant its proposal got, once", async () => {
    const authorization = await u.bearer("alice");
    const call = { tool: "notes_read", arguments: { note: "n1" } };
    const [outcome] = await handleProposal(u.gw, {
      authorization,
      format: "canonical",
      payload: call,
      execute: false,
      requestId: "r5",
    });
    const grant = outcome?.grant?.token ?? "";
    const ran = await executeWithGrant(u.gw, { authorization, grant, call, requestId: "r6" });
    expect(ran).toMatchObject({
      tool: "notes_read",
      result: { structured_content: { args: { note: "n1" } } },
    });
    await expect(
      executeWithGrant(u.gw, { authorization, grant, call, requestId: "r7" }),
    ).rejects.toMatchObject({
      category: "policy_denied",
    });
    const bob = await u.bearer("bob");
    const [again] = await handleProposal(u.gw, {
      authorization,
      format: "canonical",
      payload: call,
      execute: false,
      requestId: "r8",
    });
    await expect(
      executeWithGrant(u.gw, { authorization: bob, grant: again?.grant?.token ?? "", call, requestId: "r9" }),
    ).rejects.toMatchObject({ category: "policy_denied" });
  });
});

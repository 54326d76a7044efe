/**
 * The approval flow's core (src/mcp/approval-flow.ts) against a gateway with the real pipeline,
 * policy, approvals store and decision log: a call that needs approval is answered
 * `input_required` (a URL elicitation to the approval's console page, a state); the retry with
 * the state runs it once when approved, asks again while pending, refuses when rejected,
 * expired or declined, and refuses (-32602, logged) a state that is not the caller's or not for
 * this call.
 */
import { type InputRequiredResult, isInputRequiredResult, ProtocolError } from "@modelcontextprotocol/server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { approve, reject } from "../../src/approvals/index.ts";
import { writErrorSchema } from "../../src/core/errors.ts";
import { ToolDiscovery } from "../../src/discovery/index.ts";
import {
  APPROVAL_INPUT_KEY,
  callToolRound,
  type Round,
  type RoundAnswer,
} from "../../src/mcp/approval-flow.ts";
import { CancellableCalls } from "../../src/mcp/cancellation.ts";
import type { CallContext } from "../../src/mcp/methods/context.ts";
import { type UnitGateway, unitGateway } from "../pipeline/harness.ts";

const T0 = new Date("2030-01-01T00:00:00Z").getTime();
let clock = T0;
let u: UnitGateway;
beforeEach(async () => {
  clock = T0;
  u = await unitGateway({ now: () => new Date(clock) });
});
afterEach(() => u.close());

const REQUEST_URL = "http://127.0.0.1:4318/mcp";
const elicitationSchema = z.object({
  method: z.literal("elicitation/create"),
  params: z.object({ mode: z.literal("url"), message: z.string(), url: z.string() }),
});
const refusalSchema = z.object({
  isError: z.literal(true),
  structuredContent: z.object({ error: writErrorSchema }).passthrough(),
});
const resultSchema = z.object({
  structuredContent: z.object({ args: z.record(z.string(), z.unknown()) }),
});

async function contextOf(who: string, roles: string[] = ["dev"]): Promise<CallContext> {
  return {
    gw: u.gw,
    discovery: new ToolDiscovery(u.gw),
    cancellable: new CancellableCalls(u.gw.store),
    challenge: {},
    subject: u.subject(who, roles),
    authorization: await u.bearer(who, roles),
    requestId: `req-${who}-${Math.random()}`,
    observer: {},
    requestUrl: REQUEST_URL,
  };
}

const ARGS = { note: "n1", text: "hello" };
const call = async (who: string, round: Partial<Round> = {}, args: Record<string, unknown> = ARGS) =>
  callToolRound(
    await contextOf(who),
    { name: "notes_write", arguments: args },
    1,
    { elicitsUrl: true, ...round },
    notToday,
  );

/** What answers a request that is no round of the flow (Code Mode, a repeat naming its approval). */
const notToday = () => Promise.reject(new Error("answered as on 2025-11-25"));

function inputRequiredOf(answer: RoundAnswer): InputRequiredResult & { requestState: string } {
  if (!isInputRequiredResult(answer))
    throw new Error(`expected input_required, got ${JSON.stringify(answer)}`);
  const { requestState } = answer;
  if (requestState === undefined) throw new Error("no requestState");
  return { ...answer, requestState };
}

function elicitationOf(answer: InputRequiredResult) {
  return elicitationSchema.parse(answer.inputRequests?.[APPROVAL_INPUT_KEY]).params;
}

function refusalOf(answer: RoundAnswer) {
  return refusalSchema.parse(answer).structuredContent.error;
}

/** The one approval the store holds for alice. */
async function onlyApproval() {
  const { approvals } = await u.store.listApprovals({ tenant: "t1", requester: "alice" }, 10);
  expect(approvals).toHaveLength(1);
  const [approval] = approvals;
  if (!approval) throw new Error("no approval");
  return approval;
}

const accepted = { [APPROVAL_INPUT_KEY]: { action: "accept" } };

async function protocolErrorOf(p: Promise<unknown>): Promise<ProtocolError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ProtocolError)) throw new Error(`expected a ProtocolError, got ${String(error)}`);
  return error;
}

describe("a call that needs approval, on 2026-07-28", () => {
  it("asks for the approval through its console page, then runs once it is approved, once", async () => {
    const first = inputRequiredOf(await call("alice"));
    const approval = await onlyApproval();
    const elicitation = elicitationOf(first);
    expect(elicitation.url).toBe(`http://127.0.0.1:4318/console/approvals#approval-${approval.id}`);
    expect(elicitation.message).toContain("lead");
    expect(elicitation.message).toContain(approval.id);
    expect(elicitation.message).toContain(approval.expires_at);
    expect(u.runs.count).toBe(0);

    // Still pending: asked again, same approval, a fresh state.
    clock += 1_000;
    const again = inputRequiredOf(
      await call("alice", { requestState: first.requestState, inputResponses: accepted }),
    );
    expect(elicitationOf(again).url).toBe(elicitation.url);
    expect(again.requestState).not.toBe(first.requestState);
    expect(u.runs.count).toBe(0);

    await approve(u.gw, approval.id, u.subject("carol", ["lead"]), "fine");
    const done = await call("alice", { requestState: first.requestState, inputResponses: accepted });
    expect(resultSchema.parse(done).structuredContent.args).toEqual(ARGS);
    expect(u.runs.count).toBe(1);

    // The same state again (or the later one): the grant is spent, the call does not run twice.
    for (const requestState of [first.requestState, again.requestState]) {
      const replayed = refusalOf(await call("alice", { requestState, inputResponses: accepted }));
      expect(replayed).toMatchObject({ category: "policy_denied" });
      expect(replayed.message).toMatch(/replayed|already used/);
    }
    expect(u.runs.count).toBe(1);

    const entries = await u.entries();
    const ofApproval = entries.filter((e) => e.approval_id === approval.id).map((e) => [e.path, e.decision]);
    expect(ofApproval).toContainEqual(["writ/approvals", "allow"]);
    expect(entries.filter((e) => e.path === "writ/execute").map((e) => e.decision)).toEqual([
      "allow",
      "deny",
      "deny",
    ]);
  });

  it("an approved call proposed again without state runs at once", async () => {
    inputRequiredOf(await call("alice"));
    const approval = await onlyApproval();
    await approve(u.gw, approval.id, u.subject("carol", ["lead"]), null);
    expect(resultSchema.parse(await call("alice")).structuredContent.args).toEqual(ARGS);
    expect(u.runs.count).toBe(1);
  });

  it("refuses the retry once the approval is rejected or expired", async () => {
    const first = inputRequiredOf(await call("alice"));
    const approval = await onlyApproval();
    await reject(u.gw, approval.id, u.subject("carol", ["lead"]), "not now");
    const rejected = refusalOf(
      await call("alice", { requestState: first.requestState, inputResponses: accepted }),
    );
    expect(rejected.category).toBe("policy_denied");
    expect(rejected.message).toContain("rejected");

    const other = inputRequiredOf(await call("alice", {}, { note: "n1", text: "later" }));
    clock += 61_000; // the harness's approvals live 60 s; the state a little longer
    const expired = refusalOf(
      await call(
        "alice",
        { requestState: other.requestState, inputResponses: accepted },
        { note: "n1", text: "later" },
      ),
    );
    expect(expired.category).toBe("approval_expired");
    expect(u.runs.count).toBe(0);
  });

  it("ends the round when the user declines, leaving the approval open", async () => {
    const first = inputRequiredOf(await call("alice"));
    const declined = refusalOf(
      await call("alice", {
        requestState: first.requestState,
        inputResponses: { [APPROVAL_INPUT_KEY]: { action: "decline" } },
      }),
    );
    expect(declined.category).toBe("approval_required");
    expect((await onlyApproval()).status).toBe("pending");
  });

  it("refuses a state that was tampered with, is another caller's or another call's: -32602, logged", async () => {
    const first = inputRequiredOf(await call("alice"));
    const [header, payload, signature] = first.requestState.split(".");
    const forged = `${header}.${payload}x.${signature}`;
    const cases: Array<[string, Partial<Round>, Record<string, unknown>, string]> = [
      ["alice", { requestState: forged }, ARGS, "malformed|signature"],
      ["bob", { requestState: first.requestState }, ARGS, "another caller"],
      ["alice", { requestState: first.requestState }, { note: "n1", text: "other" }, "another call"],
    ];
    for (const [who, round, args, why] of cases) {
      const error = await protocolErrorOf(call(who, round, args));
      expect(error.code).toBe(-32602);
      const data = z.object({ error: writErrorSchema }).parse(error.data);
      expect(data.error.category).toBe("invalid_argument");
      expect(data.error.message).toMatch(
        new RegExp(why === "malformed|signature" ? "not a request state|signature" : why),
      );
    }
    const refused = (await u.entries()).filter((e) => e.path === "writ/intake");
    expect(refused.map((e) => [e.subject, e.error])).toEqual([
      ["alice", "invalid_argument"],
      ["bob", "invalid_argument"],
      ["alice", "invalid_argument"],
    ]);
    expect(u.runs.count).toBe(0);
  });

  it("answers a call that needs no approval as before", async () => {
    const answer = await callToolRound(
      await contextOf("alice"),
      { name: "notes_read", arguments: { note: "n1" } },
      1,
      { elicitsUrl: true },
      notToday,
    );
    expect(resultSchema.parse(answer).structuredContent.args).toEqual({ note: "n1" });
  });

  it("leaves a repeat naming its approval (without state) to the 2025-11-25 answer", async () => {
    const today = { content: [{ type: "text" as const, text: "today" }] };
    const params = { name: "notes_write", arguments: ARGS, _meta: { "writ/approval": "apr-1" } };
    const answer = await callToolRound(
      await contextOf("alice"),
      params,
      1,
      { elicitsUrl: true },
      async () => today,
    );
    expect(answer).toBe(today);
  });

  it("answers a client that declares no URL elicitation as on 2025-11-25, first round and retry", async () => {
    const refused = refusalOf(await call("alice", { elicitsUrl: false }));
    expect(refused.category).toBe("approval_required");
    expect(refused.suggested_fix).toContain("writ/approval");
    const first = inputRequiredOf(await call("alice"));
    const retried = refusalOf(await call("alice", { requestState: first.requestState, elicitsUrl: false }));
    expect(retried.category).toBe("approval_required");
    expect(u.runs.count).toBe(0);
  });
});

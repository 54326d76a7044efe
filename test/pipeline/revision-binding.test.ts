/**
 * A grant is bound to the resource revision its decision saw (`res.rev`), and honoured only while
 * the resource is still there at the moment of effect: a plain grant presented to execute, a call
 * decided and dispatched in one proposal (`execute: true`), and an approval's grant, collected or
 * not. A stale grant is refused `stale_revision`, `effect_committed: false`, the backend never
 * runs, the grant is not spent, and the refusal is on the log's chain.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { approve, readApproval } from "../../src/approvals/index.ts";
import { CompiledContractRegistry } from "../../src/contracts/index.ts";
import type { CallOutcome } from "../../src/core/gateway.ts";
import type { InProcessHandler } from "../../src/core/handlers.ts";
import { executeWithGrant, handleProposal } from "../../src/pipeline/index.ts";
import {
  notesHandler,
  POLICY,
  TENANT,
  TOOLS,
  type UnitGateway,
  unitGateway,
  writErrorOf,
} from "./harness.ts";

let u: UnitGateway;
beforeEach(async () => {
  u = await unitGateway();
});
afterEach(async () => {
  await u.close();
});

const NOTE = { type: "note", id: "n1" };

async function propose(tool: string, args: Record<string, unknown>, execute = false): Promise<CallOutcome> {
  const [outcome] = await handleProposal(u.gw, {
    authorization: await u.bearer("alice", ["dev"]),
    format: "canonical",
    payload: { tool, arguments: args },
    execute,
    requestId: `req-${tool}-${Math.random()}`,
  });
  if (!outcome) throw new Error("no outcome");
  return outcome;
}

/** What an admin does on PUT /v1/resources: the note changes hands (its revision moves). */
async function handTo(owner: string) {
  return u.store.putResource({ ...NOTE, owner, tenant: TENANT, attributes: { color: "blue" } });
}

function execute(token: string, tool: string, args: Record<string, unknown>) {
  return executeWithGrant(u.gw, {
    authorization: undefined,
    subject: u.subject("alice", ["dev"]),
    grant: token,
    call: { tool, arguments: args },
    requestId: `req-exec-${Math.random()}`,
  });
}

async function executionEntries() {
  return (await u.entries()).filter((e) => e.path === "writ/execute");
}

describe("a grant bound to its resource's revision", () => {
  it("is refused stale_revision once the resource changed hands, and is not spent", async () => {
    const read = await propose("notes_read", { note: "n1" });
    expect(read.decision).toBe("allow");
    const token = read.grant?.token ?? "";
    await handTo("mallory");

    const error = await writErrorOf(execute(token, "notes_read", { note: "n1" }));
    expect(error.category).toBe("stale_revision");
    expect(error.effectCommitted).toBe(false);
    expect(error.suggestedFix).toMatch(/propose the call again/);
    expect(error.message).toMatch(/note\/n1 is at revision 2 now, but grant .* was decided on revision 1/);
    expect(u.runs.count).toBe(0);

    // Handed back, the resource is at revision 3: still not the revision the grant was decided on.
    await handTo("alice");
    expect((await writErrorOf(execute(token, "notes_read", { note: "n1" }))).category).toBe("stale_revision");
    expect(u.runs.count).toBe(0);

    const [first] = await executionEntries();
    expect(first).toMatchObject({
      decision: "deny",
      error: "stale_revision",
      reasons: [expect.objectContaining({ code: "stale_revision" })],
      grant_jti: read.grant?.jti,
    });
    expect(first?.input).toMatchObject({ effect_committed: false, grant: { verified: true } });
    // Proposed again, the call is decided on the note as it is now.
    const again = await propose("notes_read", { note: "n1" });
    await execute(again.grant?.token ?? "", "notes_read", { note: "n1" });
    expect(u.runs.count).toBe(1);
  });

  it("still runs when nothing moved, and a grant for no resource is not bound", async () => {
    const read = await propose("notes_read", { note: "n1" });
    const { result } = await execute(read.grant?.token ?? "", "notes_read", { note: "n1" });
    expect(result.structured_content).toMatchObject({ revision: 1 });
    // The note does not exist: the grant is bound to its absence, and runs while it stays absent.
    const absent = await propose("notes_read", { note: "n-new" });
    await execute(absent.grant?.token ?? "", "notes_read", { note: "n-new" });
    expect(u.runs.count).toBe(2);
  });

  it("bound to a resource's absence, is stale once someone created it", async () => {
    const absent = await propose("notes_read", { note: "n-new" });
    await u.store.putResource({
      type: "note",
      id: "n-new",
      owner: "mallory",
      tenant: TENANT,
      attributes: {},
    });
    const error = await writErrorOf(execute(absent.grant?.token ?? "", "notes_read", { note: "n-new" }));
    expect(error.category).toBe("stale_revision");
    expect(error.message).toMatch(/was decided on its absence/);
    expect(u.runs.count).toBe(0);
  });

  it("decided and dispatched in one proposal: refused when the resource moved in between", async () => {
    // notes.move (on note n2) hands n1 to mallory, as an admin might meanwhile; notes.read on n1
    // waits for the same concurrency group, so it is decided (revision 1) while the move runs and
    // dispatched after it (revision 2).
    const reads = { count: 0 };
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let moving = () => {};
    const moveStarted = new Promise<void>((resolve) => {
      moving = resolve;
    });
    await withNotes(
      { concurrency_group: "notes" },
      new Map([
        ["notes", notesHandler(reads)],
        [
          "move",
          async () => {
            moving();
            await released;
            const moved = await handTo("mallory");
            return { summary: "moved n1", structured_content: { revision: moved.revision } };
          },
        ],
      ]),
    );

    const move = propose("notes_move", { note: "n2" }, true);
    await moveStarted;
    const read = propose("notes_read", { note: "n1" }, true);
    // The read's decision is on the log before the move ends: it was decided on revision 1.
    await waitFor(async () =>
      (await u.entries()).some((e) => e.action === "notes.read" && e.decision === "allow"),
    );
    release();
    const [moved, refused] = await Promise.all([move, read]);
    expect(moved.result?.structured_content).toEqual({ revision: 2 });
    expect(refused.decision).toBe("allow");
    expect(refused.result).toBeUndefined();
    expect(refused.error).toMatchObject({ category: "stale_revision", effect_committed: false });
    expect(reads.count).toBe(0);
    // Every execution is on the log: the move that ran, and the read refused at dispatch.
    const entries = await executionEntries();
    expect(entries).toHaveLength(2);
    expect(entries.find((e) => e.action === "notes.move")).toMatchObject({
      decision: "allow",
      error: null,
      grant_jti: moved.grant?.jti,
    });
    expect(entries.find((e) => e.action === "notes.read")).toMatchObject({
      decision: "deny",
      error: "stale_revision",
      grant_jti: refused.grant?.jti,
    });
  });

  it("run at once in process on one resource, calls take turns: each is decided on the revision it runs on", async () => {
    // notes.move on n1 changes n1 itself (as the demo's repo.read records a read): calls started
    // together are each decided after the previous one's change, so none is stale.
    await withNotes(
      {},
      new Map([
        [
          "move",
          async ({ resource }) => {
            const moved = await u.store.updateResourceAttributes("note", "n1", resource?.revision ?? 0, {
              color: `seen at ${resource?.revision}`,
            });
            return { summary: "touched n1", structured_content: { revision: moved?.revision ?? null } };
          },
        ],
      ]),
    );
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () => propose("notes_move", { note: "n1" }, true)),
    );
    expect(outcomes.map((o) => o.error?.category ?? "ran")).toEqual(["ran", "ran", "ran", "ran", "ran"]);
    expect(outcomes.map((o) => o.result?.structured_content.revision).sort()).toEqual([2, 3, 4, 5, 6]);
  });
});

/**
 * A gateway whose policy also allows notes.move (an in-process tool on a note, handler `move`),
 * with `readExtra` added to notes.read's contract and `handlers` as its backends.
 */
async function withNotes(
  readExtra: Record<string, unknown>,
  handlers: Map<string, InProcessHandler>,
): Promise<void> {
  const read = TOOLS.find((t) => t.name === "notes.read");
  const tools = [
    ...TOOLS.filter((t) => t.name !== "notes.read"),
    { ...read, ...readExtra },
    {
      ...read,
      name: "notes.move",
      side_effect: "committing",
      idempotency: "none",
      concurrency_group: "notes",
      backend: { kind: "inprocess", handler: "move" },
      model_views: [{ family: "default", name: "notes_move" }],
    },
  ];
  await u.close();
  u = await unitGateway({
    policy: POLICY.replace(
      'if input.action.name == "notes.read"',
      'if input.action.name in {"notes.read", "notes.move"}',
    ),
  });
  u.gw.contracts = CompiledContractRegistry.fromConfig(tools);
  u.gw.handlers = handlers;
}

describe("an approval's grant", () => {
  const ARGS = { note: "n1", text: "hello" };

  async function approved(): Promise<string> {
    const pending = await propose("notes_write", ARGS);
    const id = pending.approval?.id ?? "";
    await approve(u.gw, id, u.subject("carol", ["lead"]), "fine");
    return id;
  }

  it("is not minted once the resource moved after the approval: the request ends stale_revision", async () => {
    const id = await approved();
    await handTo("mallory");
    const read = await readApproval(u.gw, id, u.subject("alice", ["dev"]));
    expect(read).toMatchObject({ status: "rejected", resolution: "stale_revision", grant: null });
    expect(read.reasons[0]).toMatchObject({ code: "stale_revision" });
    expect(read.reasons[0]?.message).toMatch(/revision 1 → 2/);
    // Read again, it stays ended; nothing was minted, nothing ran.
    expect(await readApproval(u.gw, id, u.subject("alice", ["dev"]))).toMatchObject({ status: "rejected" });
    expect(u.runs.count).toBe(0);
    const transitions = (await u.entries()).filter(
      (e) => e.approval_id === id && e.path === "writ/approvals",
    );
    expect(transitions.at(-1)).toMatchObject({ error: "stale_revision", decision: "deny" });
  });

  it("collected before the resource moved, is refused at execution", async () => {
    const id = await approved();
    const collected = await readApproval(u.gw, id, u.subject("alice", ["dev"]));
    const token = collected.grant?.token ?? "";
    expect(token).not.toBe("");
    await handTo("mallory");
    const error = await writErrorOf(execute(token, "notes_write", ARGS));
    expect(error).toMatchObject({ category: "stale_revision", effectCommitted: false });
    expect(u.runs.count).toBe(0);
  });
});

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("the condition never held");
}

import { createHash } from "node:crypto";
/**
 * Every refusal of the sample policy (policies/writ/decision.rego), driven over HTTP the way
 * `writ demo` (src/demo/replay.ts) drives it: the model-facing answer carries only the visible
 * reasons, the decision log carries all of them. The tests run in order: the workspace remembers
 * what alice read and proposed.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DEMO_FILES } from "../../src/demo/repository.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import {
  chatToolCall,
  digestOf,
  errorOf,
  expectLogVerifies,
  logEntry,
  type Outcome,
  onlyOutcome,
  README_ARGS,
  resourceSchema,
  WS,
} from "./api.ts";

let gw: TestGateway;
let alice: string;
let bob: string;
let ops: string;

beforeAll(async () => {
  gw = await startTestGateway();
  [alice, bob, ops] = await Promise.all([
    gw.token("alice"),
    gw.token("bob"),
    gw.token("ops", { roles: ["admin"] }),
  ]);
});

afterAll(async () => {
  await gw?.close();
});

const SUM_TS = DEMO_FILES["src/sum.ts"] ?? "";
const CHANGED_SUM_TS = "export const sum = (a: number, b: number) => b - a;\n";

async function call(token: string, tool: string, args: Record<string, unknown>, execute = false) {
  return onlyOutcome(
    await gw.propose(token, { format: "openai-chat", payload: chatToolCall("call_1", tool, args), execute }),
  );
}

function codes(outcome: Outcome): string[] {
  return outcome.reasons.map((r) => r.code);
}

/** A denial as the model sees it: visible reasons, a policy_denied error, no grant, nothing run. */
function expectDenied(outcome: Outcome, reasonCodes: string[]): void {
  expect(outcome.decision).toBe("deny");
  expect(codes(outcome)).toEqual(reasonCodes);
  for (const r of outcome.reasons) expect(r.visible_to_model).toBe(true);
  expect(outcome.grant).toBeUndefined();
  expect(outcome.result).toBeUndefined();
  expect(outcome.error?.category).toBe("policy_denied");
}

/** Reads a file with `execute: true` and returns the hash the tool reported. */
async function readHash(path: string): Promise<string> {
  const outcome = await call(alice, "repo_read", { workspace: WS, path }, true);
  expect(outcome.decision).toBe("allow");
  const hash = outcome.result?.structured_content.hash;
  if (typeof hash !== "string")
    throw new Error(`reading ${path} returned no hash: ${JSON.stringify(outcome)}`);
  return hash;
}

/** What an operator does when a file changes outside the model's session (see replay.ts). */
async function setFile(path: string, content: string): Promise<void> {
  await gw.repository.write(path, content);
  const route = `/v1/resources/workspace/${WS}`;
  const current = await gw.request("GET", route, { token: ops });
  expect(current.status, current.text).toBe(200);
  const resource = resourceSchema.parse(current.json);
  const files = {
    ...resourceSchema.shape.attributes.parse(resource.attributes.files),
    [path]: digestOf(content),
  };
  const put = await gw.request("PUT", route, {
    token: ops,
    body: { owner: resource.owner, tenant: resource.tenant, attributes: { ...resource.attributes, files } },
  });
  expect(put.status, put.text).toBe(200);
  expect(resourceSchema.parse(put.json).revision).toBe(resource.revision + 1);
}

describe("the sample policy's refusals", () => {
  it("bounds an attacker-supplied path it repeats, in the answer and the log, keeping a digest", async () => {
    const path = `.secret/${"x".repeat(20_000)}`;
    const outcome = await call(alice, "repo_read", { workspace: WS, path });
    expectDenied(outcome, ["path_not_readable"]);
    const digest = createHash("sha256")
      .update(`${path} is outside the workspace's readable paths`)
      .digest("hex");
    const message = outcome.reasons[0]?.message ?? "";
    expect(message.length).toBeLessThan(2_200);
    expect(message).toContain(`sha256 ${digest}`);
    expect(outcome.error?.message.length).toBeLessThan(2_200);
    const entry = await logEntry(gw, outcome.decision_id);
    expect(entry.reasons[0]?.message).toBe(message);
  });

  it("reading .env is path_not_readable, and the model sees why", async () => {
    const outcome = await call(alice, "repo_read", { workspace: WS, path: ".env" });
    expectDenied(outcome, ["path_not_readable"]);
    expect(outcome.reasons[0]?.message).toContain(".env");
    expect(outcome.error?.message).toContain(".env is outside the workspace's readable paths");

    const entry = await logEntry(gw, outcome.decision_id);
    expect(entry).toMatchObject({
      decision: "deny",
      path: "writ/decision",
      subject: "alice",
      grant_jti: null,
    });
    expect(entry.reasons.map((r) => r.code)).toEqual(["path_not_readable"]);
  });

  it("editing README.md is path_not_editable (even with a base hash alice read)", async () => {
    const base = await readHash("README.md");
    expect(base).toBe(digestOf(DEMO_FILES["README.md"]));
    const outcome = await call(alice, "repo_propose_edit", {
      workspace: WS,
      path: "README.md",
      base_hash: base,
      before: "sum",
      after: "difference",
    });
    expectDenied(outcome, ["path_not_editable"]);
  });

  it("an edit on a base hash this workspace never read is unread_base", async () => {
    const outcome = await call(alice, "repo_propose_edit", {
      workspace: WS,
      path: "src/sum.ts",
      base_hash: "0".repeat(64),
      before: "a - b",
      after: "a + b",
    });
    expectDenied(outcome, ["unread_base"]);
  });

  it("an edit of a file that changed since it was read is stale_revision", async () => {
    const base = await readHash("src/sum.ts");
    expect(base).toBe(digestOf(SUM_TS));
    const edit = { workspace: WS, path: "src/sum.ts", base_hash: base, before: "a - b", after: "a + b" };

    await setFile("src/sum.ts", CHANGED_SUM_TS);
    expectDenied(await call(alice, "repo_propose_edit", edit), ["stale_revision"]);

    // The operator restores the file: the same edit is allowed again, and runs.
    await setFile("src/sum.ts", SUM_TS);
    const allowed = await call(alice, "repo_propose_edit", edit, true);
    expect(allowed.decision, JSON.stringify(allowed)).toBe("allow");
    expect(allowed.error).toBeUndefined();
    expect(allowed.result?.structured_content.preview).toBe(SUM_TS.replace("a - b", "a + b"));
  });

  it("a second proposal for the same file is duplicate_proposal", async () => {
    const base = digestOf(SUM_TS);
    const outcome = await call(alice, "repo_propose_edit", {
      workspace: WS,
      path: "src/sum.ts",
      base_hash: base,
      before: "a - b",
      after: "a + b",
    });
    expectDenied(outcome, ["duplicate_proposal"]);
  });

  it("bob reading alice's workspace is denied without telling the model whose it is", async () => {
    const outcome = await call(bob, "repo_read", README_ARGS);
    expect(outcome.decision).toBe("deny");
    expect(outcome.grant).toBeUndefined();
    // The only reason is hidden, so the model is told nothing beyond the denial itself.
    expect(outcome.reasons).toEqual([]);
    expect(outcome.error).toMatchObject({
      category: "policy_denied",
      message: "the policy denied this call",
    });
    const shown = JSON.stringify(outcome);
    expect(shown).not.toContain("not_owner");
    expect(shown).not.toContain("belongs to another subject");

    const entry = await logEntry(gw, outcome.decision_id);
    expect(entry).toMatchObject({ decision: "deny", subject: "bob", grant_jti: null });
    expect(entry.reasons).toContainEqual({
      code: "not_owner",
      message: `workspace ${WS} belongs to another subject`,
      visible_to_model: false,
    });
  });

  it("an unknown tool (shell) is unknown_tool and never reaches the policy", async () => {
    const evaluate = vi.spyOn(gw.gateway.policy, "evaluate");
    try {
      const outcome = await call(alice, "shell", { cmd: "cat .env" });
      expect(outcome).toMatchObject({ tool: "shell", decision: "error", reasons: [] });
      expect(outcome.grant).toBeUndefined();
      expect(outcome.error?.category).toBe("unknown_tool");
      expect(outcome.error?.suggested_fix).toContain("repo_read");
      // The call is not decided: the policy ran only to list what alice may see (discovery).
      expect(evaluate.mock.calls.every(([input]) => input.context.phase === "discover")).toBe(true);

      const entry = await logEntry(gw, outcome.decision_id);
      expect(entry).toMatchObject({
        path: "writ/intake",
        decision: "error",
        error: "unknown_tool",
        subject: "alice",
        action: null,
        grant_jti: null,
      });
      expect(entry.result).toBeUndefined();

      // The spy does see the policy when a call gets that far.
      expect((await call(alice, "repo_read", README_ARGS)).decision).toBe("allow");
      expect(evaluate.mock.calls.filter(([input]) => input.context.phase === "call")).toHaveLength(1);
    } finally {
      evaluate.mockRestore();
    }
  });

  it("arguments with an extra field are invalid_argument, before the policy", async () => {
    const evaluate = vi.spyOn(gw.gateway.policy, "evaluate");
    try {
      const outcome = await call(alice, "repo_read", { ...README_ARGS, force: true });
      expect(outcome.decision).toBe("error");
      expect(outcome.grant).toBeUndefined();
      expect(outcome.error?.category).toBe("invalid_argument");
      expect(outcome.error?.field_errors.map((f) => f.path).join(" ")).toContain("/arguments");
      expect(JSON.stringify(outcome.error?.field_errors)).toContain("force");
      expect(evaluate).not.toHaveBeenCalled();
      expect(await logEntry(gw, outcome.decision_id)).toMatchObject({
        path: "writ/intake",
        error: "invalid_argument",
      });
    } finally {
      evaluate.mockRestore();
    }
  });

  it("only an admin may rewrite a resource", async () => {
    const error = errorOf(
      await gw.request("PUT", `/v1/resources/workspace/${WS}`, {
        token: alice,
        body: { owner: "alice", tenant: "demo", attributes: { read_paths: [".env"] } },
      }),
      403,
    );
    expect(error.category).toBe("forbidden");
    expectDenied(await call(alice, "repo_read", { workspace: WS, path: ".env" }), ["path_not_readable"]);
  });
});

it("the decision log verifies", async () => {
  await expectLogVerifies(gw);
});

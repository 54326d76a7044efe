/**
 * Code Mode end to end: a real gateway on loopback, `POST /v1/run_code` and `GET /v1/run_code/sdk`
 * over HTTP, programs in the real sandbox, every inner call through the real pipeline, policy and
 * decision log.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { writErrorSchema } from "../../src/core/errors.ts";
import { runLogs, writeStoreConfig } from "../cli/logs-helpers.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
let alice: string;
let reviewer: string;

beforeAll(async () => {
  gw = await startTestGateway({
    // Small limits keep the runaway programs below quick.
    configure: (document) => ({
      ...document,
      // cpu_ms leaves a program of a few calls room on a loaded machine (its first run warms the engine).
      code_mode: { enabled: true, cpu_ms: 600, memory_bytes: 2 * 1024 * 1024, max_calls: 6 },
    }),
  });
  alice = await gw.token("alice");
  reviewer = await gw.token("rita", { roles: ["reviewer"] });
});

let tmp: string | undefined;

afterAll(async () => {
  await gw?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const ledgerEntrySchema = z.strictObject({
  index: z.number(),
  tool: z.string(),
  args_digest: z.string().regex(/^[0-9a-f]{64}$/),
  decision: z.string().nullable(),
  decision_id: z.string().nullable(),
  effect_committed: z.union([z.boolean(), z.literal("unknown")]),
  error: writErrorSchema.optional(),
  approval: z.object({ id: z.string(), status: z.string() }).passthrough().optional(),
});
const callSchema = z.strictObject({
  index: z.number(),
  tool: z.string(),
  decision_id: z.string().nullable(),
});
const runSchema = z.strictObject({
  run: z.strictObject({ id: z.string(), decision_id: z.string() }),
  outcome: z.enum(["returned", "threw", "stopped", "refused"]),
  value: z.unknown().optional(),
  ledger: z.array(ledgerEntrySchema),
  logs: z.array(z.string()),
  error: writErrorSchema.optional(),
  stop_reason: z.string().optional(),
  failed_call: callSchema.optional(),
  approval: z.object({ id: z.string() }).passthrough().optional(),
  committed_calls: z.array(callSchema),
});
const entriesSchema = z.object({
  entries: z.array(
    z
      .object({
        decision_id: z.string(),
        action: z.string().nullable(),
        decision: z.string(),
        input: z.unknown(),
        reasons: z.array(z.object({ code: z.string() }).passthrough()),
      })
      .passthrough(),
  ),
});

async function runCode(code: string, token = alice) {
  const answer = await gw.request("POST", "/v1/run_code", { token, body: { code } });
  const body = runSchema.safeParse(answer.json);
  if (!body.success) throw new Error(`HTTP ${answer.status}: ${answer.text}`);
  return { status: answer.status, body: body.data };
}

async function runEntries(runId: string) {
  const answer = await gw.request("GET", `/v1/decisions?run=${encodeURIComponent(runId)}`, {
    token: reviewer,
  });
  expect(answer.status, answer.text).toBe(200);
  // Oldest first.
  return entriesSchema.parse(answer.json).entries.reverse();
}

const read = (path: string) => `tools.repo_read({ workspace: "ws-demo", path: ${JSON.stringify(path)} })`;

describe("POST /v1/run_code", () => {
  it("runs a program whose calls each have their own log entry, linked to the run and its entry", async () => {
    const { status, body } = await runCode(`
      const found = await tools.repo_search({ workspace: "ws-demo", query: "sum" });
      const [readme, sum] = await Promise.all([${read("README.md")}, ${read("src/sum.ts")}]);
      console.log("read", readme.path, sum.path);
      const hashes: string[] = [readme.hash as string, sum.hash as string];
      return { matches: (found.matches as unknown[]).length, hashes };`);
    expect(status).toBe(200);
    expect(body.outcome).toBe("returned");
    expect(body.value).toMatchObject({
      hashes: [expect.stringMatching(/^[0-9a-f]{64}$/), expect.any(String)],
    });
    expect(body.logs).toEqual(["read README.md src/sum.ts"]);
    expect(body.ledger.map((e) => [e.index, e.tool, e.decision, e.effect_committed])).toEqual([
      [0, "repo_search", "allow", false],
      [1, "repo_read", "allow", false],
      [2, "repo_read", "allow", false],
    ]);
    expect(body.committed_calls).toEqual([]);

    const entries = await runEntries(body.run.id);
    expect(entries.map((e) => [e.action, e.decision])).toEqual([
      ["code.run", "allow"],
      ["repo.search", "allow"],
      ["repo.read", "allow"],
      ["repo.read", "allow"],
    ]);
    expect(entries[0]?.decision_id).toBe(body.run.decision_id);
    expect(new Set(entries.slice(1).map((e) => e.decision_id))).toEqual(
      new Set(body.ledger.map((e) => e.decision_id)),
    );
    for (const entry of entries) {
      expect(entry.input).toMatchObject({ context: { run: body.run } });
    }
    // The run's own entry holds the program's digest and size, never its text.
    expect(JSON.stringify(entries[0]?.input)).not.toContain("repo_search");
    expect(entries[0]?.input).toMatchObject({
      action: {
        args: { code_sha256: expect.stringMatching(/^[0-9a-f]{64}$/), code_bytes: expect.any(Number) },
      },
    });

    // writ logs finds the same entries.
    tmp = await mkdtemp(path.join(os.tmpdir(), "writ-run-logs-"));
    const config = await writeStoreConfig(gw, tmp);
    const logs = await runLogs(["query", "--config", config, "--run", body.run.id, "--format", "ndjson"]);
    expect(logs.code, logs.stderr).toBe(0);
    const ids = logs.stdout.map(
      (line) => z.object({ decision_id: z.string() }).parse(JSON.parse(line)).decision_id,
    );
    expect(ids.reverse()).toEqual(entries.map((e) => e.decision_id));
  });

  it("throws a call that was allowed but failed into the program, which may catch it", async () => {
    const { status, body } = await runCode(`
      const sum = await ${read("src/sum.ts")};
      try {
        await tools.repo_propose_edit({
          workspace: "ws-demo", path: "src/sum.ts", base_hash: sum.hash as string, before: "no such text", after: "x",
        });
        return "no error";
      } catch (e) {
        const error = e as Error & { detail?: { category?: string } };
        return { message: error.message, category: error.detail?.category };
      }`);
    expect(status).toBe(200);
    expect(body.value).toMatchObject({ category: "invalid_argument" });
    expect(String((body.value as { message: string }).message)).toContain("occurs 0 times");
    expect(body.ledger[1]).toMatchObject({
      tool: "repo_propose_edit",
      decision: "allow",
      effect_committed: false,
      error: { category: "invalid_argument" },
    });
  });

  it("ends the run at a denied call: later calls are not made, and the outcome says what was committed", async () => {
    const { status, body } = await runCode(`
      const sum = await ${read("src/sum.ts")};
      await tools.repo_propose_edit({
        workspace: "ws-demo", path: "src/sum.ts", base_hash: sum.hash as string, before: "a - b", after: "a + b",
      });
      try {
        await ${read(".env")};
      } catch (e) {
        console.log("never reached: a refusal cannot be caught");
      }
      await ${read("README.md")};
      return "done";`);
    expect(status).toBe(403);
    expect(body.outcome).toBe("stopped");
    expect(body.logs).toEqual([]);
    expect(body.ledger.map((e) => [e.tool, e.decision, e.effect_committed])).toEqual([
      ["repo_read", "allow", false],
      ["repo_propose_edit", "allow", true],
      ["repo_read", "deny", false],
    ]);
    expect(body.failed_call).toEqual({
      index: 2,
      tool: "repo_read",
      decision_id: body.ledger[2]?.decision_id,
    });
    expect(body.error).toMatchObject({ category: "policy_denied", effect_committed: true });
    expect(body.error?.message).toContain(".env is outside the workspace's readable paths");
    expect(body.committed_calls.map((c) => c.tool)).toEqual(["repo_propose_edit"]);
    const entries = await runEntries(body.run.id);
    expect(entries.map((e) => e.decision)).toEqual(["allow", "allow", "allow", "deny"]);
    expect(entries[3]?.reasons.map((r) => r.code)).toEqual(["path_not_readable"]);
  });

  it("ends the run at a call that needs approval, naming the approval; the run's allow authorizes nothing inside", async () => {
    const { status, body } = await runCode(`
      const sum = await ${read("src/sum.ts")};
      await tools.repo_apply_edit({
        workspace: "ws-demo", path: "src/sum.ts", base_hash: sum.hash as string, before: "a - b", after: "a + b",
      });
      return "applied";`);
    expect(status).toBe(202);
    expect(body.outcome).toBe("stopped");
    const approval = body.ledger[1]?.approval;
    expect(approval).toMatchObject({ status: "pending", approver_roles: ["maintainer"] });
    expect(body.approval?.id).toBe(approval?.id);
    expect(body.error).toMatchObject({ category: "approval_required", effect_committed: false });
    expect(body.error?.message).toContain(`needs approval ${approval?.id}`);
    expect(body.failed_call?.index).toBe(1);
    expect(body.ledger[1]).toMatchObject({ decision: "require_approval", effect_committed: false });
    // Nothing was written.
    expect(await gw.repository.read("src/sum.ts")).toContain("a - b");
  });

  it("stops a program that loops forever, allocates without bound or calls too often; the gateway stays healthy", async () => {
    const loop = await runCode("while (true) {}");
    expect(loop.status).toBe(504);
    expect(loop.body).toMatchObject({
      outcome: "stopped",
      stop_reason: "cpu",
      error: { category: "timeout" },
    });

    const memory = await runCode("const kept = []; for (;;) kept.push({ n: kept.length });");
    expect(memory.body).toMatchObject({ outcome: "stopped", stop_reason: "memory" });
    expect(memory.body.error?.category).toBe("invalid_argument");

    const calls = await runCode(`for (let i = 0; i < 10; i++) await ${read("README.md")}; return "all";`);
    expect(calls.body).toMatchObject({ outcome: "stopped", stop_reason: "calls" });
    // The call past the limit is not made: six calls, six entries (and the run's own).
    expect(calls.body.ledger).toHaveLength(6);
    expect(await runEntries(calls.body.run.id)).toHaveLength(7);

    expect((await gw.health()).status).toBe("ok");
    const proposal = await gw.propose(alice, {
      format: "canonical",
      payload: { tool: "repo.read", arguments: { workspace: "ws-demo", path: "README.md" } },
      execute: true,
    });
    expect(proposal.status).toBe(200);
  });

  it("gives a program no network, files, environment or host clock", async () => {
    const { status, body } = await runCode(`
      const tried: Record<string, string> = {};
      const attempt = async (name: string, f: () => unknown) => {
        try { tried[name] = "reached: " + String(await f()); } catch (e) { tried[name] = "refused: " + (e as Error).name; }
      };
      await attempt("fetch", () => fetch("http://127.0.0.1:1/"));
      await attempt("require", () => require("node:fs"));
      await attempt("process", () => process.env.HOME);
      await attempt("import", () => import("node:fs"));
      await attempt("Function", () => new Function("return process")());
      await attempt("globalThis", () => Object.keys(globalThis).filter((k) => !["tools", "console"].includes(k)).join(","));
      return { tried, now: Date.now() === Date.now() };`);
    expect(status).toBe(200);
    const value = z.object({ tried: z.record(z.string(), z.string()), now: z.boolean() }).parse(body.value);
    for (const name of ["fetch", "require", "process", "import", "Function"]) {
      expect(value.tried[name], name).toMatch(/^refused/);
    }
    expect(value.tried.globalThis).not.toMatch(/process|require|fetch/);
    expect(body.ledger).toEqual([]);
  });

  it("answers a syntax error with the line, and a run the policy refuses with its entry", async () => {
    const syntax = await runCode("const x = ;");
    expect(syntax.status).toBe(400);
    expect(syntax.body).toMatchObject({ outcome: "stopped", stop_reason: "syntax" });
    expect(syntax.body.error?.field_errors[0]?.path).toBe("/code");

    const threw = await runCode(`console.log("about to fail"); throw new RangeError("boom");`);
    expect(threw.status).toBe(422);
    expect(threw.body).toMatchObject({
      outcome: "threw",
      logs: ["about to fail"],
      error: { category: "tool_error" },
    });
    expect(threw.body.error?.message).toContain("RangeError: boom");

    const outsider = await gw.token("olga", { roles: ["auditor"] });
    const refused = await runCode("return 1;", outsider);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      outcome: "refused",
      ledger: [],
      error: { category: "policy_denied" },
    });
    const [entry] = await runEntries(refused.body.run.id);
    expect(entry).toMatchObject({ action: "code.run", decision: "deny" });

    const large = await runCode(`return ${JSON.stringify("x".repeat(17_000))}.length;`);
    expect(large.body.error?.message).toContain("runs take at most 16384");
  });

  it("refuses a caller without a token, and a malformed body", async () => {
    const anonymous = await gw.request("POST", "/v1/run_code", { body: { code: "return 1" } });
    expect(anonymous.status).toBe(401);
    const extra = await gw.request("POST", "/v1/run_code", {
      token: alice,
      body: { code: "return 1", x: 1 },
    });
    expect(extra.status).toBe(400);
  });
});

describe("a call started while the program's answer is built (issue 27)", () => {
  it("is refused, never made, and on the run's ledger", async () => {
    const { status, body } = await runCode(`
      const readme = await ${read("README.md")};
      return { toJSON() { ${read("src/sum.ts")}; return readme.path; } };`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ outcome: "returned", value: "README.md" });
    expect(body.ledger.map((e) => [e.index, e.tool, e.decision, e.effect_committed])).toEqual([
      [0, "repo_read", "allow", false],
      [1, "repo_read", "error", false],
    ]);
    expect(body.ledger[1]?.error).toMatchObject({ category: "invalid_argument" });
    expect(body.ledger[1]?.error?.message).toMatch(/while the program's answer was being built/);
    // Only the call made before the answer reached the gateway.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const entries = await runEntries(body.run.id);
    expect(entries.map((e) => e.action)).toEqual(["code.run", "repo.read"]);
  });
});

describe("GET /v1/run_code/sdk", () => {
  it("declares exactly the tools the caller may discover", async () => {
    const answer = await gw.request("GET", "/v1/run_code/sdk", { token: alice });
    expect(answer.status).toBe(200);
    const sdk = z
      .strictObject({ declarations: z.string(), tools: z.array(z.string()), run_code: z.boolean() })
      .parse(answer.json);
    const listed = z
      .object({ tools: z.array(z.object({ name: z.string() })) })
      .parse((await gw.request("GET", "/v1/tools", { token: alice })).json);
    expect(sdk.tools).toEqual(listed.tools.map((t) => t.name));
    for (const name of sdk.tools) expect(sdk.declarations).toContain(`${name}(args: {`);
    expect(sdk.run_code).toBe(true);

    // A policy that hides repo.apply_edit hides it from the SDK too.
    const { readFile } = await import("node:fs/promises");
    const original = await readFile(gw.decisionRego, "utf8");
    try {
      await gw.writePolicy(
        `${original}\ndenials contains reason("hidden", "hidden") if input.action.name == "repo.apply_edit"\n`,
      );
      await expect
        .poll(
          async () => {
            const again = await gw.request("GET", "/v1/run_code/sdk", { token: alice });
            return z.object({ tools: z.array(z.string()) }).parse(again.json).tools;
          },
          { timeout: 30_000 },
        )
        .not.toContain("repo_apply_edit");
    } finally {
      await gw.writePolicy(original);
    }
  });
});

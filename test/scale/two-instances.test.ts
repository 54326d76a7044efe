/**
 * Two Writ processes on one PostgreSQL database, raced over real HTTP: what must hold across
 * instances holds in the database. 1,000 concurrent attempts, split between the instances, to
 * use the same single-use grants, decide the same approvals and replay the same idempotency keys
 * yield exactly one success each, and the decision log both wrote is one verifiable chain.
 * Then an instance is killed with SIGKILL under load: every grant it handed out is in the log.
 * And a policy change on disk reaches every instance, which agree on its revision.
 */
import { spawnSync } from "node:child_process";
import { readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { canonicalCall, layeredResultSchema, onlyOutcome, WS } from "../e2e/api.ts";
import { answerOf, type HttpAnswer, healthSchema, waitFor } from "../support/gateway.ts";
import {
  type Deployment,
  killMidLoad,
  startDeployment,
  WITH_CHILDREN_MS,
  type WritProcess,
} from "../support/instances.ts";
import { repoRoot } from "../support/paths.ts";
import { postgresUnavailable, sql, startTestPostgres, type TestPostgres } from "../support/postgres.ts";

async function call(
  instance: WritProcess,
  method: string,
  route: string,
  token: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const response = await fetch(`${instance.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return answerOf(response);
}

const propose = (instance: WritProcess, token: string, tool: string, args: Record<string, unknown>) =>
  call(instance, "POST", "/v1/proposals", token, { format: "canonical", payload: canonicalCall(tool, args) });

/** How many answers have each status. */
function statuses(answers: HttpAnswer[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const answer of answers) counts[answer.status] = (counts[answer.status] ?? 0) + 1;
  return counts;
}

const executedSchema = z.object({ result: layeredResultSchema });
const grantJtiRowSchema = z.object({ jti: z.string().nullable() });

describe.skipIf(postgresUnavailable !== undefined)("two Writ instances on one PostgreSQL", () => {
  let server: TestPostgres;
  let deployment: Deployment;
  let databaseUrl: string;
  let a: WritProcess;
  let b: WritProcess;
  let alice: string;
  let carol: string;

  beforeAll(async () => {
    server = await startTestPostgres();
    databaseUrl = await server.createDatabase("writ_scale");
    deployment = await startDeployment({ postgres: databaseUrl });
    // Started together on an empty database: both migrate and both look for the signing keys.
    [a, b] = await Promise.all([deployment.start(), deployment.start()]);
    alice = await deployment.token("alice");
    carol = await deployment.token("carol", ["maintainer"]);
  }, WITH_CHILDREN_MS);
  afterAll(async () => {
    await deployment?.close();
    await server?.stop();
  });

  async function verifyLog(): Promise<number> {
    // `writ logs verify`, as an operator runs it, against the database both instances wrote.
    const verify = spawnSync(
      process.execPath,
      [
        path.join(repoRoot, "bin", "writ.mjs"),
        "logs",
        "verify",
        "--format",
        "json",
        "--config",
        deployment.configFile,
      ],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(verify.stderr).toBe("");
    expect(verify.status).toBe(0);
    const verified = z.object({ ok: z.literal(true), entries: z.number() }).parse(JSON.parse(verify.stdout));
    return verified.entries;
  }

  it("lets exactly one of 1,000 concurrent attempts through per grant, approval and idempotency key", async () => {
    const instances = [a, b];
    const at = (i: number) => instances[i % 2] ?? a;
    const grantFor = async (i: number, tool: string, args: Record<string, unknown>) => {
      const grant = onlyOutcome(await propose(at(i), alice, tool, args)).grant;
      if (grant === undefined) throw new Error("the proposal got no grant");
      return grant.token;
    };

    // The base hash an edit needs: both instances serve the same demo files.
    const sumArgs = { workspace: WS, path: "src/sum.ts" };
    const read = await call(b, "POST", "/v1/execute", alice, {
      grant: await grantFor(0, "repo_read", sumArgs),
      tool: "repo_read",
      arguments: sumArgs,
    });
    const hash = z.string().parse(executedSchema.parse(read.json).result.structured_content.hash);
    const editArgs = { ...sumArgs, base_hash: hash, before: "a - b", after: "a + b" };

    // Ten grants and ten approvals, made on alternating instances. The races search (which,
    // unlike a read, leaves the workspace's revision alone, so the approvals stay current).
    const search = { workspace: WS, query: "sum" };
    const grants = await Promise.all(
      Array.from({ length: 10 }, (_, i) => grantFor(i, "repo_search", search)),
    );
    const keyed = await Promise.all(
      Array.from({ length: 10 }, (_, i) => grantFor(i + 1, "repo_search", search)),
    );
    const approvals = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        // Ten different edits: the same edit proposed again would get the same request back.
        const args = { ...editArgs, after: `a + b /* ${i} */` };
        const outcome = onlyOutcome(await propose(at(i), alice, "repo_apply_edit", args));
        expect(outcome.decision).toBe("require_approval");
        return outcome.approval?.id ?? "";
      }),
    );

    // 400 executions of the grants, 300 approvals, 300 keyed replays: all at once.
    const execute = (i: number, grant: string, headers: Record<string, string> = {}) =>
      call(at(i), "POST", "/v1/execute", alice, { grant, tool: "repo_search", arguments: search }, headers);
    const grantRuns = grants.map((grant) => Array.from({ length: 40 }, (_, i) => () => execute(i, grant)));
    const approvalRuns = approvals.map((id) =>
      Array.from(
        { length: 30 },
        (_, i) => () => call(at(i), "POST", `/v1/approvals/${id}/approve`, carol, {}),
      ),
    );
    const keyedRuns = keyed.map((grant, k) =>
      Array.from({ length: 30 }, (_, i) => () => execute(i, grant, { "idempotency-key": `race-${k}` })),
    );
    const groups = [...grantRuns, ...approvalRuns, ...keyedRuns];
    expect(groups.flat()).toHaveLength(1000);
    const started = Date.now();
    const answers = await Promise.all(groups.map((runs) => Promise.all(runs.map((run) => run()))));
    const elapsed = Date.now() - started;
    console.log(`1,000 concurrent attempts on two instances: ${elapsed} ms`);

    const grantAnswers = answers.slice(0, 10);
    const approvalAnswers = answers.slice(10, 20);
    const keyedAnswers = answers.slice(20);
    for (const runs of grantAnswers) {
      expect(statuses(runs), [...new Set(runs.map((r) => r.text))].join("\n")).toEqual({ 200: 1, 403: 39 });
      for (const refused of runs.filter((r) => r.status === 403))
        expect(refused.text).toMatch(/already used/);
    }
    for (const runs of approvalAnswers)
      expect(statuses(runs), [...new Set(runs.map((r) => r.text))].join("\n")).toEqual({ 200: 1, 409: 29 });
    for (const [k, runs] of keyedAnswers.entries()) {
      // One claim executes; every other attempt is told it is running (409) or replays the same
      // answer. A second execution would have met the used grant: a 403 here.
      const ok = runs.filter((r) => r.status === 200);
      expect(ok.length, JSON.stringify(statuses(runs))).toBeGreaterThanOrEqual(1);
      expect(ok.length + runs.filter((r) => r.status === 409).length).toBe(30);
      for (const answer of ok) expect(answer.json).toEqual(ok[0]?.json);
      const replay = await execute(k + 1, keyed[k] ?? "", { "idempotency-key": `race-${k}` });
      expect(replay.status).toBe(200);
      expect(replay.json).toEqual(ok[0]?.json);
    }
    const uses = await sql(
      databaseUrl,
      "SELECT uses FROM grant_uses WHERE jti = ANY($1::text[]) ORDER BY jti",
      [[...grants, ...keyed].map((token) => z.string().parse(decodeJwt(token).jti))],
    );
    expect(uses).toEqual(Array.from({ length: 20 }, () => ({ uses: 1 })));

    expect(await verifyLog()).toBeGreaterThan(30);
  }, 60_000);

  it("logs every grant an instance handed out before it was killed with SIGKILL mid-load", async () => {
    const victim = await deployment.start();
    const { granted, failures } = await killMidLoad(victim, alice, 150);
    const received = granted.flatMap((outcome) => (outcome.grant ? [outcome.grant.jti] : []));
    expect(failures).toBeGreaterThan(0);

    const rows = await sql(
      databaseUrl,
      "SELECT entry::jsonb ->> 'grant_jti' AS jti FROM decisions WHERE entry::jsonb ->> 'grant_jti' = ANY($1::text[])",
      [received],
    );
    const logged = new Set(rows.map((row) => grantJtiRowSchema.parse(row).jti));
    expect(received.filter((jti) => !logged.has(jti))).toEqual([]);
    expect(logged.size).toBe(received.length);
    await verifyLog();
  }, 60_000);

  it(
    "reloads a changed policy on every instance, to the same revision",
    async () => {
      const revision = async (instance: WritProcess) =>
        healthSchema.parse((await call(instance, "GET", "/healthz", alice)).json).policy_revision;
      const before = await revision(a);
      expect(await revision(b)).toBe(before);
      const file = path.join(deployment.policyDir, "writ", "decision.rego");
      const staged = `${file}.${process.pid}.tmp`;
      await writeFile(staged, `${await readFile(file, "utf8")}\nreload_marker := 1\n`);
      await rename(staged, file);
      const after = await waitFor(
        "both instances to reload",
        async () => {
          const [ra, rb] = await Promise.all([revision(a), revision(b)]);
          return ra !== before && ra === rb ? ra : undefined;
        },
        15_000,
      );
      expect(after).not.toBe(before);
    },
    WITH_CHILDREN_MS,
  );
});

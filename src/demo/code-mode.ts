/**
 * The demo's Code Mode step: one program (`POST /v1/run_code`) searches the workspace, reads two
 * files in parallel and proposes the fix, then tries to read `.env`, which the policy refuses: the
 * run ends there, and its ledger shows each call's decision and what was committed before it.
 */
import { z } from "zod";

const runAnswerSchema = z.object({
  run: z.object({ id: z.string(), decision_id: z.string() }),
  outcome: z.string(),
  ledger: z.array(
    z.object({
      index: z.number(),
      tool: z.string(),
      decision: z.string().nullable(),
      decision_id: z.string().nullable(),
      effect_committed: z.union([z.boolean(), z.literal("unknown")]),
      error: z.object({ category: z.string(), message: z.string() }).optional(),
    }),
  ),
  logs: z.array(z.string()),
  error: z.object({ category: z.string(), message: z.string() }).optional(),
  committed_calls: z.array(z.object({ index: z.number(), tool: z.string() })),
});

/** The program the demo runs (TypeScript; the SDK at GET /v1/run_code/sdk declares the tools). */
export const DEMO_PROGRAM = `const workspace = "ws-demo";
const found = await tools.repo_search({ workspace, query: "sum" });
console.log(\`search: \${(found.matches as unknown[]).length} matching lines\`);
const [readme, sum] = await Promise.all([
  tools.repo_read({ workspace, path: "README.md" }),
  tools.repo_read({ workspace, path: "src/sum.ts" }),
]);
console.log(\`README says: \${String(readme.content).split("\\n")[2]}\`);
const proposal = await tools.repo_propose_edit({
  workspace,
  path: "src/sum.ts",
  base_hash: sum.hash as string,
  before: "a - b",
  after: "a + b",
});
console.log(\`proposed: \${proposal.preview}\`);
// Not in the readable paths: the policy refuses it, and the run ends here.
const env = await tools.repo_read({ workspace, path: ".env" });
return { proposal, env };`;

/** Runs the demo program as `token`'s subject and prints the outcome: ledger, console lines, error. */
export async function runDemoProgram(url: string, token: string, title: string): Promise<void> {
  const response = await fetch(`${url}/v1/run_code`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ code: DEMO_PROGRAM, session: "demo" }),
  });
  const body: unknown = await response.json();
  console.log(`\n== ${title}  (alice, run_code)`);
  const parsed = runAnswerSchema.safeParse(body);
  if (!parsed.success) {
    console.log(`   HTTP ${response.status}: ${JSON.stringify(body)}`);
    return;
  }
  const run = parsed.data;
  for (const call of run.ledger) {
    const committed = call.effect_committed === true ? ", committed" : "";
    const error = call.error ? ` (${call.error.category}: ${call.error.message})` : "";
    console.log(
      `   [${call.index}] ${call.tool} -> ${call.decision ?? "in flight"}${committed}${error}  [decision ${call.decision_id}]`,
    );
  }
  for (const line of run.logs) console.log(`   console: ${line}`);
  console.log(`   run ${run.run.id}: HTTP ${response.status}, ${run.outcome}`);
  if (run.error) console.log(`   error ${run.error.category}: ${run.error.message}`);
  const committed = run.committed_calls.map((c) => `[${c.index}] ${c.tool}`).join(", ");
  console.log(`   committed before it ended: ${committed || "nothing"}`);
  console.log(`   its log entries: writ logs query --run ${run.run.id}`);
}

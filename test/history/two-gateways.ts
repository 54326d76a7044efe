/**
 * What the two-gateway history tests share (history-instances: PostgreSQL; history-sqlite-instances:
 * one SQLite file): alice's edit of the demo's src/sum.ts, and a call proposed in a session.
 */
import { canonicalCall, type Outcome, onlyOutcome, readForEdit, WS } from "../e2e/api.ts";
import type { TestGateway } from "../support/gateway.ts";

/** The edit the sample policy refuses read_first until src/sum.ts was read in the session. */
export async function sumEdit(gw: TestGateway, token: string): Promise<Record<string, unknown>> {
  return {
    workspace: WS,
    path: "src/sum.ts",
    base_hash: await readForEdit(gw, token, "src/sum.ts"),
    before: "a - b",
    after: "a + b",
  };
}

/** The read that counts in reads_of_path for that edit. */
export const SUM_READ = { workspace: WS, path: "src/sum.ts" };

/** The one outcome of `tool` proposed on `gw` in `session`. */
export async function proposeIn(
  gw: TestGateway,
  token: string,
  tool: string,
  args: object,
  session: string,
): Promise<Outcome> {
  return onlyOutcome(
    await gw.propose(token, { format: "canonical", payload: canonicalCall(tool, { ...args }), session }),
  );
}

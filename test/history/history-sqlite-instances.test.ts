/**
 * History facts on one SQLite file shared by two gateways (as two Writ processes may share it):
 * each store keeps the buckets it read in memory (store/sqlite-history.ts), and a read must still
 * see what the other one logged since. One gateway first reads a session's fact (0: the edit is
 * refused read_first, and the 0 stays in its memory), the other logs a read in that session, and
 * the first lets the edit through; its own appends are counted once, not again from the file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Outcome } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { proposeIn, SUM_READ, sumEdit } from "./two-gateways.ts";

const loggedReads = z.object({
  context: z.object({ history: z.object({ reads_of_path: z.object({ count: z.number() }) }) }),
});

describe("history facts across two gateways on one SQLite file", () => {
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    a = await startTestGateway();
    const file = z.object({ location: z.string() }).parse(a.gateway.store).location;
    b = await startTestGateway({ configure: (document) => ({ ...document, store: { sqlite: file } }) });
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("sees on one gateway the reads the other logged after it read the fact", async () => {
    // Each test gateway trusts its own identity provider: alice has a token for each.
    const onA = await a.token("alice");
    const onB = await b.token("alice");
    const edit = await sumEdit(a, onA);
    const reads = async (gw: TestGateway, outcome: Outcome) =>
      loggedReads.parse((await gw.gateway.log.get(outcome.decision_id))?.input).context.history.reads_of_path
        .count;
    const read = () => proposeIn(a, onA, "repo.read", SUM_READ, "shared");

    const before = await proposeIn(b, onB, "repo.propose_edit", edit, "shared");
    expect(before.reasons.map((r) => r.code)).toEqual(["read_first"]);
    expect((await read()).decision).toBe("allow");
    const after = await proposeIn(b, onB, "repo.propose_edit", edit, "shared");
    expect(after.decision).toBe("allow");
    expect(await reads(b, after)).toBe(1);

    // A's own reads, counted from its memory: each once.
    const second = await read();
    expect(await reads(a, second)).toBe(1);
    const onItsOwn = await proposeIn(a, onA, "repo.propose_edit", edit, "shared");
    expect(await reads(a, onItsOwn)).toBe(2);
    // And B, which read the fact at 1, sees the second read too.
    expect(await reads(b, await proposeIn(b, onB, "repo.propose_edit", edit, "shared"))).toBe(2);

    const other = await proposeIn(b, onB, "repo.propose_edit", edit, "another");
    expect(other.reasons.map((r) => r.code)).toEqual(["read_first"]);
  });
});

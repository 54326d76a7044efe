/** The `history:` section: what `writ config check` (parseConfig) says about a wrong one. */
import { describe, expect, it } from "vitest";
import { configProblems, defaultConfigDocument } from "../support/config-file.ts";

async function problemsWith(history: unknown): Promise<string> {
  return configProblems({ ...(await defaultConfigDocument()), history });
}

describe("the history section", () => {
  it("names each problem with its place and what to write instead", async () => {
    const problems = await problemsWith([
      { name: "a", per: ["session", "bogus", "args."], window_s: 0, sum: "subject" },
      { name: "a", window_s: 99_999_999 },
      { name: "b", match: { decision: ["deny"], executed: true }, window_s: 60 },
    ]);
    expect(problems).toContain(
      '/history/0/per/1: "bogus" is not a key: use one of subject, tenant, session, run, resource, args.<field> or args./json/pointer',
    );
    expect(problems).toContain('/history/0/per/2: "args." is not a key');
    expect(problems).toContain("/history/0/window_s: window_s is at least 1 (second)");
    expect(problems).toContain(
      '/history/0/sum: sum names an argument (args.<field> or args./json/pointer), not "subject"',
    );
    expect(problems).toContain("/history/1/window_s: window_s is at most 2678400 (31 days)");
    expect(problems).toContain('/history/1/name: another history fact is named "a": names are unique');
    expect(problems).toContain("/history/2/match/decision: an executed call was allowed");
  });

  it("refuses a tool no contract declares", async () => {
    expect(await problemsWith([{ name: "c", match: { tools: ["repo.raed"] }, window_s: 60 }])).toContain(
      '/history/0/match/tools/0: no tool named "repo.raed" under tools:',
    );
  });
});

/** The `limits:` section: what `writ config check` (parseConfig) says about a wrong one. */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { parseConfig } from "../../src/config/index.ts";
import { configProblems, defaultConfigDocument } from "../support/config-file.ts";
import { repoRoot } from "../support/paths.ts";

async function problemsWith(limits: unknown): Promise<string> {
  return configProblems({ ...(await defaultConfigDocument()), limits });
}

describe("the limits section", () => {
  it("the default configuration limits repo.search to 30 calls per minute per subject", async () => {
    const config = parseConfig(await defaultConfigDocument(), "/tmp");
    expect(config.limits).toEqual([
      { name: "repo-search", match: { tools: ["repo.search"] }, per: ["subject"], calls: 30, window_s: 60 },
    ]);
  });

  it("names each problem with its place", async () => {
    expect(
      await problemsWith([
        { name: "a", calls: 5, window_s: 60 },
        { name: "a", steps: 3 },
      ]),
    ).toContain('/limits/1/name: another limit is named "a"');
    expect(await problemsWith([{ name: "b", calls: 5, steps: 3, window_s: 1 }])).toContain(
      "exactly one of calls (with window_s), steps or value; this one has calls and steps",
    );
    expect(await problemsWith([{ name: "c" }])).toContain("this one has none");
    expect(await problemsWith([{ name: "d", calls: 5 }])).toContain(
      "/limits/0/window_s: calls needs window_s",
    );
    expect(await problemsWith([{ name: "e", steps: 5, burst: 2 }])).toContain("/limits/0/burst");
    expect(await problemsWith([{ name: "f", value: { pointer: "amount", max: 5, window_s: 60 } }])).toContain(
      "/limits/0/value/pointer: a JSON Pointer",
    );
    expect(
      await problemsWith([{ name: "g", calls: 1, window_s: 1, match: { tools: ["repo.serch"] } }]),
    ).toContain('/limits/0/match/tools/0: no tool named "repo.serch"');
    expect(await problemsWith([{ name: "h", calls: 1, window_s: 1, per: ["planet"] }])).toContain(
      "/limits/0/per/0",
    );
    expect(await problemsWith([{ name: "bad name", steps: 1 }])).toContain("/limits/0/name");
  });

  it("lets a limit meter Code Mode's runs (code.run) while Code Mode is on, and only then", async () => {
    const runs = [{ name: "runs", calls: 10, window_s: 3600, match: { tools: ["code.run"] } }];
    expect(await problemsWith(runs)).toBe("");
    expect(
      await configProblems({
        ...(await defaultConfigDocument()),
        limits: runs,
        code_mode: { enabled: false },
      }),
    ).toContain('/limits/0/match/tools/0: no tool named "code.run"');
  });

  it("accepts the README's example", async () => {
    const readme = await readFile(path.join(repoRoot, "README.md"), "utf8");
    const example = /```yaml\n(limits:\n[\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    expect(await problemsWith(parseYaml(example ?? "").limits)).toBe("");
  });
});

/**
 * The README shows the backend examples verbatim: the files the tests run
 * (examples/backend/server.mjs in package.test.ts, verify_grant.py in python.test.ts) must be
 * what a reader copies.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/paths.ts";

describe("the README's backend examples", () => {
  it.each([
    ["examples/backend/server.mjs", "js"],
    ["examples/backend/verify_grant.py", "python"],
  ])("show %s as it is", async (file, language) => {
    const readme = await readFile(path.join(repoRoot, "README.md"), "utf8");
    const source = await readFile(path.join(repoRoot, file), "utf8");
    expect(readme).toContain(`\`\`\`${language}\n${source}\`\`\``);
  });
});

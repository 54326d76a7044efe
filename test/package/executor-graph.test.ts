/**
 * `writ/executor` stands alone: importing it (here from the sources, through tsx) loads its own
 * folder and a few small core modules (errors, digest, JSON Pointer, the grant types), and of the
 * dependencies only zod, jose and canonicalize — no server, store, compiler or MCP front, and no
 * hono (its middleware names hono's types only). test/package/package.test.ts checks the same on
 * the compiled, installed package.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/paths.ts";
import { executorAllowance, modulesLoadedBy } from "./modules.ts";

describe("writ/executor's import graph (sources)", () => {
  it("loads only the executor, the small core modules, zod, jose and canonicalize", async () => {
    const src = path.join(repoRoot, "src");
    const loaded = await modulesLoadedBy(path.join(src, "executor/index.ts"), {
      cwd: repoRoot,
      root: src,
      tsx: true,
    });
    expect(loaded.own).toContain("executor/verify");
    expect(loaded.own.filter((m) => !executorAllowance.own.test(m))).toEqual([]);
    expect(loaded.packages.filter((p) => !executorAllowance.packages.includes(p))).toEqual([]);
  });

  it("would notice a gateway module in the graph", async () => {
    const src = path.join(repoRoot, "src");
    const loaded = await modulesLoadedBy(path.join(src, "grants/index.ts"), {
      cwd: repoRoot,
      root: src,
      tsx: true,
    });
    expect(loaded.own.filter((m) => !executorAllowance.own.test(m))).not.toEqual([]);
  });
});

/**
 * `writ/executor` stands alone: importing it (here from the sources, through tsx) loads its own
 * folder and a few small core modules (errors and their field errors, digest, JSON Pointer, the grant types), and of the
 * dependencies only zod, jose and canonicalize — no server, store, compiler or MCP front, and no
 * hono (its middleware names hono's types only). test/package/package.test.ts checks the same on
 * the compiled, installed package.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/paths.ts";
import { beyondExecutor, modulesLoadedBy } from "./modules.ts";

const src = path.join(repoRoot, "src");
const graphOf = (module: string) =>
  modulesLoadedBy(path.join(src, module), { cwd: repoRoot, root: src, tsx: true });

describe("writ/executor's import graph (sources)", () => {
  it("loads only the executor, the small core modules, zod, jose and canonicalize", async () => {
    const loaded = await graphOf("executor/index.ts");
    expect(loaded.own).toContain("executor/verify");
    expect(beyondExecutor(loaded)).toEqual([]);
  });

  it("would notice a gateway module in the graph", async () => {
    expect(beyondExecutor(await graphOf("grants/index.ts"))).not.toEqual([]);
  });
});

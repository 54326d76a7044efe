/**
 * Dependencies point one way: no cycle of value imports anywhere in src/ (type-only imports are
 * erased and do not count), and nothing outside the pipeline imports a stage through a cycle.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/paths.ts";

const SRC = path.join(repoRoot, "src");
const IMPORT =
  /^\s*(import|export)\s+(type\s+)?(\{[^}]*\}|\*(?:\s+as\s+\w+)?|[\w$]+(?:\s*,\s*\{[^}]*\})?)\s+from\s+"(\.[^"]+)"/gm;

/** The value imports of one module (relative ones only), resolved to files. */
function valueImports(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    if (m[2]) continue; // `import type …`
    const names = m[3] ?? "";
    if (names.startsWith("{")) {
      const specifiers = names
        .slice(1, -1)
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
      if (specifiers.length > 0 && specifiers.every((s) => s.startsWith("type "))) continue;
    }
    out.push(path.resolve(path.dirname(file), m[4] ?? ""));
  }
  return out;
}

async function graph(): Promise<Map<string, string[]>> {
  const entries = await readdir(SRC, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name));
  const edges = new Map<string, string[]>();
  for (const file of files) edges.set(file, valueImports(file, await readFile(file, "utf8")));
  return edges;
}

/** One cycle per strongly connected group found by a depth-first walk. */
function cycles(edges: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, "open");
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (!edges.has(next)) continue;
      if (state.get(next) === "open") found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (state.get(next) === undefined) visit(next);
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of edges.keys()) if (state.get(node) === undefined) visit(node);
  return found;
}

describe("module dependencies", () => {
  it("have no cycle of value imports in src/", async () => {
    const found = cycles(await graph()).map((c) => c.map((f) => path.relative(repoRoot, f)).join(" → "));
    expect(found).toEqual([]);
  });

  it("the approvals import stages, never the pipeline's index", async () => {
    const edges = await graph();
    const index = path.join(SRC, "pipeline", "index.ts");
    const approvals = [...edges].filter(([file]) => file.startsWith(path.join(SRC, "approvals")));
    expect(approvals.length).toBeGreaterThan(0);
    for (const [, imports] of approvals) expect(imports).not.toContain(index);
  });
});

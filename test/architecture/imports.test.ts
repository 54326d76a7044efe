/**
 * Dependencies point one way: no cycle among the value imports of `src/` (type-only imports are
 * erased at run time and may point back; side-effect imports such as `import "./impl/x.ts"`
 * count). Imports are read with the TypeScript parser, not patterns. A cycle makes module evaluation order decide what a
 * module sees at load time, which is how the builtin catalog once came up with 36 builtins
 * missing in the `writ` command and not in the tests.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/paths.ts";

const srcRoot = path.join(repoRoot, "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [full] : [];
  });
}

/** The relative modules a file imports for their values (imports and re-exports, side effects included). */
function valueImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  for (const stmt of source.statements) {
    let specifier: ts.Expression | undefined;
    if (ts.isImportDeclaration(stmt)) {
      const clause = stmt.importClause;
      if (clause?.isTypeOnly) continue;
      const named = clause?.namedBindings;
      const onlyTypes =
        clause !== undefined &&
        clause.name === undefined &&
        named !== undefined &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every((e) => e.isTypeOnly);
      if (onlyTypes) continue;
      specifier = stmt.moduleSpecifier;
    } else if (ts.isExportDeclaration(stmt) && stmt.moduleSpecifier) {
      if (stmt.isTypeOnly) continue;
      const clause = stmt.exportClause;
      if (clause && ts.isNamedExports(clause) && clause.elements.every((e) => e.isTypeOnly)) continue;
      specifier = stmt.moduleSpecifier;
    }
    if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith(".")) {
      out.push(path.resolve(path.dirname(file), specifier.text));
    }
  }
  return out;
}

/** Strongly connected components with more than one module (or a module importing itself). */
function cycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("module dependencies in src/", () => {
  it("have no import cycle", () => {
    const graph = new Map(sourceFiles(srcRoot).map((f) => [f, valueImports(f)]));
    const found = cycles(graph).map((c) => c.map((f) => path.relative(srcRoot, f)).join(" <-> "));
    expect(found).toEqual([]);
  });

  it("let the approvals import stages, never the pipeline's index", () => {
    const index = path.join(srcRoot, "pipeline", "index.ts");
    const approvals = sourceFiles(path.join(srcRoot, "approvals"));
    expect(approvals.length).toBeGreaterThan(0);
    for (const file of approvals) expect(valueImports(file)).not.toContain(index);
  });

  it("load the compiler only when something is compiled: writ serve starts without it", () => {
    // binaryen (13 MB) and the compiler load on a compiled-policy cache miss, an explanation or a
    // coverage run, through dynamic imports; a static path from the server would cost every
    // start about half a second (an explanation's import once did).
    const graph = new Map(sourceFiles(srcRoot).map((f) => [f, valueImports(f)]));
    const reached = new Set<string>();
    const walk = (file: string): void => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const next of graph.get(file) ?? []) walk(next);
    };
    walk(path.join(srcRoot, "server.ts"));
    walk(path.join(srcRoot, "cli", "serve.ts"));
    expect(reached.has(path.join(srcRoot, "server.ts"))).toBe(true);
    expect(reached.size).toBeGreaterThan(100);
    expect([...reached].filter((f) => f === path.join(srcRoot, "rego", "build.ts"))).toEqual([]);
  });

  it("would see a cycle (the check itself works)", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]],
    ]);
    expect(cycles(graph)).toEqual([["a", "b", "c"]]);
  });
});

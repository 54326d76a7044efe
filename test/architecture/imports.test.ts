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

type Import = { target: string; typeOnly: boolean };

/** The relative modules a file imports (imports and re-exports, side effects included), each marked type-only or not. */
function importsOf(file: string): Import[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
  const out: Import[] = [];
  for (const stmt of source.statements) {
    let specifier: ts.Expression | undefined;
    let typeOnly = false;
    if (ts.isImportDeclaration(stmt)) {
      const clause = stmt.importClause;
      const named = clause?.namedBindings;
      typeOnly =
        clause?.isTypeOnly === true ||
        (clause !== undefined &&
          clause.name === undefined &&
          named !== undefined &&
          ts.isNamedImports(named) &&
          named.elements.length > 0 &&
          named.elements.every((e) => e.isTypeOnly));
      specifier = stmt.moduleSpecifier;
    } else if (ts.isExportDeclaration(stmt) && stmt.moduleSpecifier) {
      const clause = stmt.exportClause;
      typeOnly =
        stmt.isTypeOnly ||
        (clause !== undefined && ts.isNamedExports(clause) && clause.elements.every((e) => e.isTypeOnly));
      specifier = stmt.moduleSpecifier;
    }
    if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith(".")) {
      out.push({ target: path.resolve(path.dirname(file), specifier.text), typeOnly });
    }
  }
  return out;
}

/** The relative modules a file imports for their values. */
function valueImports(file: string): string[] {
  return importsOf(file)
    .filter((i) => !i.typeOnly)
    .map((i) => i.target);
}

/**
 * The layer table of ARCHITECTURE.md ("Which module may import which"): rows from the top, each
 * naming folders of `src/` or single files. Returns a function from a file to its layer's index
 * (0 = top), the most specific name winning (`pipeline/index.ts` before `pipeline`).
 */
function layerTable(markdown: string): { layerOf: (file: string) => number | undefined; rows: string[][] } {
  const marker = markdown.indexOf("<!-- layers:");
  if (marker < 0) throw new Error("ARCHITECTURE.md has no layer table (<!-- layers: … -->)");
  const rows: string[][] = [];
  for (const line of markdown.slice(marker).split("\n").slice(1)) {
    if (!line.startsWith("|")) {
      if (rows.length > 0 || line.trim() !== "") break;
      continue;
    }
    const cells = line.split("|").map((c) => c.trim());
    const modules = [...(cells[2] ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "");
    if (modules.length > 0) rows.push(modules);
  }
  const names = rows.flatMap((row, index) => row.map((name) => ({ name, index })));
  names.sort((a, b) => b.name.length - a.name.length);
  const layerOf = (file: string): number | undefined => {
    const relative = path.relative(srcRoot, file).split(path.sep).join("/");
    return names.find(({ name }) => relative === name || relative.startsWith(`${name}/`))?.index;
  };
  return { layerOf, rows };
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
  const files = sourceFiles(srcRoot);
  const table = layerTable(readFileSync(path.join(repoRoot, "ARCHITECTURE.md"), "utf8"));

  it("have no import cycle, of values or of types", () => {
    const graph = new Map(files.map((f) => [f, importsOf(f).map((i) => i.target)]));
    const found = cycles(graph).map((c) => c.map((f) => path.relative(srcRoot, f)).join(" <-> "));
    expect(found).toEqual([]);
  });

  it("place every module in a layer of ARCHITECTURE.md's table", () => {
    expect(table.rows.length).toBeGreaterThan(3);
    const unplaced = files
      .filter((f) => table.layerOf(f) === undefined)
      .map((f) => path.relative(srcRoot, f));
    expect(unplaced).toEqual([]);
  });

  it("import values only from their own layer or below", () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = table.layerOf(file);
      for (const target of valueImports(file)) {
        const to = table.layerOf(target);
        if (from !== undefined && to !== undefined && to < from) {
          upward.push(`${path.relative(srcRoot, file)} → ${path.relative(srcRoot, target)}`);
        }
      }
    }
    expect(upward).toEqual([]);
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

  it("would see an upward import (the table is read as written)", () => {
    const { layerOf, rows } = layerTable(
      "<!-- layers: -->\n| layer | modules |\n|---|---|\n| top | `server.ts` |\n| middle | `pipeline/index.ts` |\n| low | `pipeline`, `core` |\n\nprose",
    );
    expect(rows).toEqual([["server.ts"], ["pipeline/index.ts"], ["pipeline", "core"]]);
    expect(layerOf(path.join(srcRoot, "pipeline", "index.ts"))).toBe(1);
    expect(layerOf(path.join(srcRoot, "pipeline", "05-decide.ts"))).toBe(2);
    expect(layerOf(path.join(srcRoot, "core", "errors.ts"))).toBe(2);
    expect(layerOf(path.join(srcRoot, "http", "app.ts"))).toBeUndefined();
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

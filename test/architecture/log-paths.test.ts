/**
 * Writ's own decision-log paths (`writ/execute`, `writ/approvals`, …) are named in one table,
 * `src/decisionlog/kinds.ts` (issue 28): a module elsewhere builds its entry with the kind's
 * builder and never spells the path. Read with the TypeScript parser: every string literal and
 * template text of `src/` outside `src/decisionlog/` (comments and help text in prose are free to
 * mention a path; a literal that equals one, or starts with one and a slash, is not).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ENTRY_KINDS } from "../../src/decisionlog/index.ts";
import { repoRoot } from "../support/paths.ts";

const srcRoot = path.join(repoRoot, "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (full === path.join(srcRoot, "decisionlog") || full === path.join(srcRoot, "rego")) return [];
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [full] : [];
  });
}

/** `line: text` of every string literal or template text of `text` naming one of `paths`. */
function namedPaths(file: string, text: string, paths: readonly string[]): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node)) {
      const value = node.text;
      if (paths.some((p) => value === p || value.startsWith(`${p}/`))) {
        found.push(
          `${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1} ${value}`,
        );
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("decision-log paths", () => {
  const paths = Object.values(ENTRY_KINDS).flatMap((k) => (k.path === null ? [] : [k.path]));

  it("are Writ's own (writ/…) and named once each in the table of entry kinds", () => {
    expect(paths.length).toBeGreaterThan(5);
    for (const p of paths) expect(p).toMatch(/^writ\/[a-z_]+$/);
  });

  it("are not spelled outside src/decisionlog/", () => {
    const found = sourceFiles(srcRoot).flatMap((f) =>
      namedPaths(path.relative(repoRoot, f), readFileSync(f, "utf8"), paths),
    );
    expect(found).toEqual([]);
  });

  it("would see a path spelled by hand (the check itself works)", () => {
    const text =
      '// writ/execute in a comment is prose\nconst a = "writ/execute";\nconst b = `writ/approvals/${1}`;\nconst c = "writ/executor";\n';
    expect(namedPaths("x.ts", text, ["writ/execute", "writ/approvals"])).toEqual([
      "x.ts:2 writ/execute",
      "x.ts:3 writ/approvals/",
    ]);
  });
});

/**
 * Outside the Rego compiler, a module stays readable in one sitting: no file over 450 lines and
 * no function over 100 (issue 28). A longer one is split into named steps that read as the order
 * of things. Counted with the TypeScript parser: every function, method, accessor, constructor and
 * arrow function, from its first line to its last. `src/rego/` ports OPA's compiler and formatter
 * rule for rule and is held by its conformance scoreboard instead.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/paths.ts";

const srcRoot = path.join(repoRoot, "src");
const MAX_FILE_LINES = 450;
const MAX_FUNCTION_LINES = 100;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (full === path.join(srcRoot, "rego")) return [];
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [full] : [];
  });
}

function lineCount(text: string): number {
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

function functionName(node: ts.Node, source: ts.SourceFile): string {
  const named = node as { name?: ts.Node };
  if (named.name !== undefined) return named.name.getText(source);
  const parent = node.parent;
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent)
  ) {
    return parent.name.getText(source);
  }
  return "(anonymous)";
}

/** `file:line name (n lines)` for every function of `text` longer than `max` lines. */
function longFunctions(file: string, text: string, max: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) found.push(`${file}:${first + 1} ${functionName(node, source)} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("module size outside src/rego", () => {
  const files = sourceFiles(srcRoot);

  it(`keeps every file at ${MAX_FILE_LINES} lines or fewer`, () => {
    expect(files.length).toBeGreaterThan(100);
    const long = files
      .map((f) => ({ file: path.relative(repoRoot, f), lines: lineCount(readFileSync(f, "utf8")) }))
      .filter(({ lines }) => lines > MAX_FILE_LINES)
      .map(({ file, lines }) => `${file} (${lines} lines)`);
    expect(long).toEqual([]);
  });

  it(`keeps every function at ${MAX_FUNCTION_LINES} lines or fewer`, () => {
    const long = files.flatMap((f) =>
      longFunctions(path.relative(repoRoot, f), readFileSync(f, "utf8"), MAX_FUNCTION_LINES),
    );
    expect(long).toEqual([]);
  });

  it("would see a long function (the count itself works)", () => {
    const body = Array.from({ length: 5 }, (_, i) => `  const v${i} = ${i};`).join("\n");
    const text = `export function short() {\n${body}\n}\nconst arrow = () => {\n${body}\n${body}\n};\nclass K { method() {\n${body}\n} }\n`;
    expect(longFunctions("x.ts", text, 7)).toEqual(["x.ts:8 arrow (12 lines)"]);
    expect(longFunctions("x.ts", text, 6)).toEqual([
      "x.ts:1 short (7 lines)",
      "x.ts:8 arrow (12 lines)",
      "x.ts:20 method (7 lines)",
    ]);
  });
});

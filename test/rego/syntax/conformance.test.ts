/**
 * Every module, query and `input_term` of OPA's conformance cases must parse, and every module
 * must print back to the same AST. The cases live outside the repository and may be absent.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { astEqual, parseModule, parseQuery, parseTerm, printModule } from "../../../src/rego/syntax/index.ts";

const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const casesDir = resolve(repositoryRoot, "../shared/conformance/opa/cases");
const casesPresent = existsSync(casesDir);

interface ConformanceCase {
  file: string;
  note: string;
  query: string | undefined;
  inputTerm: string | undefined;
  modules: string[];
  expectsParseError: boolean;
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return path.endsWith(".yaml") ? [path] : [];
  });
}

function field(record: object, name: string): unknown {
  return name in record ? (record as Record<string, unknown>)[name] : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function loadCases(): ConformanceCase[] {
  return yamlFiles(casesDir).flatMap((path) => {
    const document: unknown = parseYaml(readFileSync(path, "utf8"));
    const cases = typeof document === "object" && document !== null ? field(document, "cases") : undefined;
    if (!Array.isArray(cases)) return [];
    return cases.flatMap((c: unknown): ConformanceCase[] => {
      if (typeof c !== "object" || c === null) return [];
      const modules = field(c, "modules");
      return [
        {
          file: relative(casesDir, path),
          note: text(field(c, "note")) ?? "",
          query: text(field(c, "query")),
          inputTerm: text(field(c, "input_term")),
          modules: Array.isArray(modules) ? modules.filter((m): m is string => typeof m === "string") : [],
          expectsParseError: field(c, "want_error_code") === "rego_parse_error",
        },
      ];
    });
  });
}

if (!casesPresent)
  console.log(`conformance cases not found at ${casesDir}: skipping the conformance parse tests`);

describe.skipIf(!casesPresent)("OPA conformance cases", () => {
  const cases = casesPresent ? loadCases() : [];
  const parsedCases = cases.filter((c) => !c.expectsParseError);

  it("loads the cases", () => {
    expect(cases.length).toBeGreaterThan(0);
  });

  it("parses every module, query and input term", () => {
    const failures: string[] = [];
    for (const c of parsedCases) {
      const errors = [
        ...c.modules.flatMap((source, i) => parseModule(source, `module-${i}.rego`).errors),
        ...(c.query === undefined ? [] : parseQuery(c.query, "query.rego").errors),
        ...(c.inputTerm === undefined ? [] : parseTerm(c.inputTerm, "input.rego").errors),
      ];
      if (errors.length > 0) failures.push(`${c.file} ${c.note}: ${errors.map((e) => e.message).join("; ")}`);
    }
    expect(failures).toEqual([]);
    // The exclusions above must stay a small minority: the project needs 99% of cases to parse.
    expect(parsedCases.length / cases.length).toBeGreaterThanOrEqual(0.99);
  });

  it("reports parse errors where a case expects them", () => {
    for (const c of cases.filter((c) => c.expectsParseError)) {
      const errors = c.modules.flatMap((source, i) => parseModule(source, `module-${i}.rego`).errors);
      expect(errors.length, `${c.file} ${c.note}`).toBeGreaterThan(0);
    }
  });

  it("prints every module back to the same AST", () => {
    const failures: string[] = [];
    for (const c of parsedCases) {
      c.modules.forEach((source, i) => {
        const file = `module-${i}.rego`;
        const { module } = parseModule(source, file);
        if (module === undefined) return;
        const printed = printModule(module);
        const again = parseModule(printed, file);
        if (again.module === undefined || !astEqual(again.module, module)) {
          failures.push(`${c.file} ${c.note}\n${printed}\n${again.errors.map((e) => e.message).join("\n")}`);
        }
      });
    }
    expect(failures).toEqual([]);
  });
});

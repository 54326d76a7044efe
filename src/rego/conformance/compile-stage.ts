/**
 * The compile stage: a case passes when its modules and query compile, or, when the case expects
 * a compile-time error (`rego_*_error`), when the compiler reports that code.
 */
import { compile, type QuerySource } from "../compile/index.ts";
import type { RegoError } from "../errors.ts";
import type { Module } from "../syntax/ast.ts";
import { parseModule, parseQuery } from "../syntax/index.ts";
import type { LoadedCase } from "./cases.ts";
import type { CaseOutcome } from "./runner.ts";

/** Parses and compiles a case's modules with its query as the only query, named `query`. */
export function compileCase(loaded: LoadedCase): {
  errors: RegoError[];
  result: ReturnType<typeof compile> | undefined;
} {
  const c = loaded.case;
  const modules: Module[] = [];
  const errors: RegoError[] = [];
  c.modules.forEach((source, i) => {
    const parsed = parseModule(source, `module-${i}.rego`);
    errors.push(...parsed.errors);
    if (parsed.module) modules.push(parsed.module);
  });
  const query = parseQuery(c.query, "query.rego");
  errors.push(...query.errors);
  if (errors.length > 0 || !query.body) return { errors, result: undefined };
  const queries: QuerySource[] = [{ name: "query", body: query.body }];
  const result = compile(modules, queries);
  return { errors: result.errors, result };
}

export function compileStage(loaded: LoadedCase): CaseOutcome {
  const { errors } = compileCase(loaded);
  const want = loaded.case.want_error_code;
  if (want?.startsWith("rego_")) {
    if (errors.some((e) => e.code === want)) return { status: "passed" };
    return {
      status: "failed",
      reason:
        errors.length === 0
          ? `expected ${want}, but it compiled`
          : `expected ${want}, got:\n${errors.map((e) => e.message).join("\n")}`,
    };
  }
  if (errors.length === 0) return { status: "passed" };
  return { status: "failed", reason: errors.map((e) => e.message).join("\n") };
}

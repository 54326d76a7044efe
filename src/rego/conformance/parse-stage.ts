/**
 * The parse stage: a case passes when its modules, its query and its `input_term` parse, or,
 * when the case expects `rego_parse_error`, when the parser reports one.
 */
import type { RegoError } from "../errors.ts";
import { parseModule, parseQuery, parseTerm } from "../syntax/index.ts";
import type { LoadedCase } from "./cases.ts";
import type { CaseOutcome } from "./runner.ts";

function parseErrorsOf(loaded: LoadedCase): RegoError[] {
  const c = loaded.case;
  const errors: RegoError[] = [];
  c.modules.forEach((source, i) => {
    errors.push(...parseModule(source, `module-${i}.rego`).errors);
  });
  errors.push(...parseQuery(c.query, "query.rego").errors);
  if (c.input_term !== undefined) errors.push(...parseTerm(c.input_term, "input_term.rego").errors);
  return errors;
}

export function parseStage(loaded: LoadedCase): CaseOutcome {
  const errors = parseErrorsOf(loaded);
  const expectsParseError = loaded.case.want_error_code === "rego_parse_error";
  if (expectsParseError) {
    return errors.length > 0
      ? { status: "passed" }
      : { status: "failed", reason: "expected rego_parse_error, but everything parsed" };
  }
  if (errors.length === 0) return { status: "passed" };
  return { status: "failed", reason: errors.map((e) => e.message).join("\n") };
}

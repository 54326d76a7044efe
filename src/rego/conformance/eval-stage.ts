/**
 * The eval stage: each case's modules are compiled to WebAssembly with the case's query as an
 * entrypoint and evaluated through the official `@open-policy-agent/opa-wasm` SDK.
 *
 * `want_result` is compared as a set of bindings (arrays inside bindings are sorted first when
 * the case says `sort_bindings`); `want_error_code` by code, and for `eval_conflict_error` also
 * by message.
 */

import { canonicalJson } from "../../core/digest.ts";
import { isRecord } from "../../core/json.ts";
import { buildPolicy } from "../build.ts";
import { loadCompiledPolicy, PolicyEvaluationError } from "../policy.ts";
import type { Term } from "../syntax/ast.ts";
import { parseTerm } from "../syntax/index.ts";
import type { LoadedCase } from "./cases.ts";
import type { CaseOutcome } from "./runner.ts";

/** A JSON value from a Rego term (sets become arrays, as OPA's `ast.JSON` does), if it is ground. */
export function termToJson(t: Term): unknown {
  switch (t.type) {
    case "null":
      return null;
    case "boolean":
      return t.value;
    case "number":
      return Number(t.value);
    case "string":
      return t.value;
    case "array":
    case "set":
      return t.items.map(termToJson);
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [k, v] of t.entries) {
        const key = termToJson(k);
        out[typeof key === "string" ? key : JSON.stringify(key)] = termToJson(v);
      }
      return out;
    }
    default:
      throw new Error(`input_term must be a ground term, not ${t.type}`);
  }
}

function normalizeBindings(bindings: unknown, sort: boolean): string {
  if (bindings === null || typeof bindings !== "object" || Array.isArray(bindings))
    return canonicalJson(bindings);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(bindings)) {
    out[k] =
      sort && Array.isArray(v)
        ? [...v].sort((a, b) =>
            canonicalJson(a) < canonicalJson(b) ? -1 : canonicalJson(a) > canonicalJson(b) ? 1 : 0,
          )
        : v;
  }
  return canonicalJson(out);
}

function sameResultSets(got: readonly unknown[], want: readonly unknown[], sort: boolean): boolean {
  const g = new Set(got.map((b) => normalizeBindings(b, sort)));
  const w = new Set(want.map((b) => normalizeBindings(b, sort)));
  if (g.size !== w.size) return false;
  for (const x of w) if (!g.has(x)) return false;
  return true;
}

/** The OPA error code in an abort message (`file:1:2: eval_conflict_error: …`). */
function errorCodeOf(message: string): string {
  return /\b((?:eval|rego)_[a-z_]+_error): /.exec(message)?.[1] ?? "eval_internal_error";
}

export async function evalStage(loaded: LoadedCase): Promise<CaseOutcome> {
  const c = loaded.case;
  // A case may name the error by code, by message (`want_error`, whose code is in its text), or both.
  const wantCode = c.want_error_code ?? (c.want_error !== undefined ? errorCodeOf(c.want_error) : undefined);
  const built = buildPolicy(
    c.modules.map((source, i) => ({ file: `module-${i}.rego`, source })),
    // Metered, as the gateway builds: the conformance measures the modules that decide calls.
    {
      queries: [{ name: "query", query: c.query }],
      strictBuiltinErrors: c.strict_error === true,
      budget: true,
    },
  );
  if (!built.wasm) {
    if (wantCode && built.errors.some((e) => e.code === wantCode)) return { status: "passed" };
    return { status: "failed", reason: `build failed:\n${built.errors.map((e) => e.message).join("\n")}` };
  }
  if (wantCode?.startsWith("rego_"))
    return { status: "failed", reason: `expected ${wantCode}, but it compiled` };

  let input: unknown = c.input;
  if (c.input_term !== undefined) {
    const parsed = parseTerm(c.input_term, "input_term.rego");
    if (!parsed.term)
      return { status: "failed", reason: `input_term does not parse: ${parsed.errors[0]?.message}` };
    input = termToJson(parsed.term);
  }

  let result: unknown;
  try {
    const data = c.data === undefined || c.data === null ? {} : c.data;
    if (!isRecord(data)) return { status: "failed", reason: "the case's data is not an object" };
    const policy = await loadCompiledPolicy({ wasm: built.wasm, hostBuiltins: built.hostBuiltins, data });
    result = policy.evaluate(input, "query");
  } catch (error) {
    const message =
      error instanceof PolicyEvaluationError
        ? error.detail
        : error instanceof Error
          ? error.message
          : String(error);
    if (wantCode) {
      const code = errorCodeOf(message);
      if (code !== wantCode) return { status: "failed", reason: `expected ${wantCode}, got: ${message}` };
      if (code === "eval_conflict_error" && c.want_error && !message.includes(c.want_error)) {
        return {
          status: "failed",
          reason: `expected error ${JSON.stringify(c.want_error)}, got: ${message}`,
        };
      }
      return { status: "passed" };
    }
    return { status: "failed", reason: `evaluation failed: ${message}` };
  }
  if (!Array.isArray(result))
    return { status: "failed", reason: `the SDK returned ${JSON.stringify(result)}` };
  if (wantCode) {
    // Builtin errors are undefined unless the case asks for strict builtin errors, as in OPA.
    return { status: "failed", reason: `expected ${wantCode}, got result ${JSON.stringify(result)}` };
  }
  if (c.want_defined !== undefined) {
    return result.length > 0 === c.want_defined
      ? { status: "passed" }
      : { status: "failed", reason: `expected defined=${c.want_defined}, got ${JSON.stringify(result)}` };
  }
  const want = c.want_result ?? [];
  if (sameResultSets(result, want, c.sort_bindings === true)) return { status: "passed" };
  return { status: "failed", reason: `want ${canonicalJson(want)}\n got ${canonicalJson(result)}` };
}

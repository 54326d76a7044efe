/**
 * `opa fmt` for Rego v1: `formatSource` lays a module out exactly as OPA's formatter does, so a
 * file `opa fmt` wrote comes back byte for byte and `writ policy fmt` can stand in for it.
 *
 * It parses the source (without reading `# METADATA` blocks, as `opa fmt` does not), rebuilds
 * OPA's view of the module with OPA's node locations (`./tree.ts`, from the tokens in
 * `./spans.ts`), and writes it with the port of OPA's writer (`./writer.ts`). As OPA checks its
 * own output, the result is parsed again: a formatting that would not parse is an error, never
 * written.
 */
import { RegoError } from "../errors.ts";
import { parseModule, type RegoVersion } from "../syntax/index.ts";
import { recycleTokens, tokenize } from "../syntax/lexer.ts";
import { pathParts } from "./imports.ts";
import { checkRegoV1 } from "./regov1.ts";
import { SourceTokens } from "./spans.ts";
import { type FImport, type FModule, formatTree } from "./tree.ts";
import { FormatProblem, writeModule } from "./writer.ts";

export type FormatResult = { ok: true; text: string } | { ok: false; errors: RegoError[] };

/**
 * What Rego `opa fmt` writes (its `Opts.RegoVersion`): `v1` (the default), `v0-v1` (OPA's
 * `RegoV0CompatV1`, `--v0-v1`: Rego v1 with `import rego.v1`, which v0 parses the same), or
 * `v0` (`--v0-compatible`: Rego v0 stays v0).
 */
export type FormatTarget = "v1" | "v0-v1" | "v0";

export interface FormatOptions {
  /** Drop `import rego.v1` and `future.keywords` imports, no-ops in Rego v1 (`--drop-v0-imports`). */
  dropV0Imports?: boolean;
  /** The Rego written (default `v1`). */
  target?: FormatTarget;
  /**
   * The Rego version the source is read as: 1 for the `v1` target, else 0 (as `opa fmt`:
   * `--v0-v1` reads v0, and v1 with `--v1-compatible`).
   */
  regoVersion?: RegoVersion;
}

/** Formats the Rego module `source` (named `file` in errors) as `opa fmt` would. */
export function formatSource(source: string, file: string, options: FormatOptions = {}): FormatResult {
  const target = options.target ?? "v1";
  const regoVersion = options.regoVersion ?? (target === "v1" ? 1 : 0);
  const parsed = parseModule(source, file, { annotations: false, regoVersion });
  if (parsed.module === undefined) return { ok: false, errors: parsed.errors };
  const stream = tokenize(source, file);
  let tree: FModule;
  try {
    tree = formatTree(parsed.module, new SourceTokens(stream));
  } finally {
    recycleTokens(stream);
  }
  if (target !== "v0") {
    // What the writer cannot mend makes the module no Rego v1: OPA refuses to format it.
    const errors = checkRegoV1(parsed.module, tree, file);
    if (errors.length > 0) return { ok: false, errors };
  }
  tree.imports = formattedImports(tree.imports, target, options.dropV0Imports ?? false);
  let text: string;
  try {
    text = writeModule(tree, target === "v0" ? "v0" : "v1");
  } catch (error) {
    if (!(error instanceof FormatProblem)) throw error;
    const at = error.loc && { file, line: error.loc.row, col: error.loc.col, offset: error.loc.offset };
    const code = error.message.endsWith("arity mismatch") ? "rego_type_error" : "rego_format_error";
    return { ok: false, errors: [new RegoError(code, error.message, at)] };
  }
  const check = parseModule(text, file, { annotations: false, regoVersion: target === "v0" ? 0 : 1 });
  if (check.module === undefined) {
    const reasons = check.errors.map((e) => e.detail).join("; ");
    // OPA checks its output the same way, and fails on the same few constructs.
    const detail = `${file}: formatted as opa fmt does, the policy no longer parses (${reasons}); opa fmt fails on it too: write that rule differently`;
    return { ok: false, errors: [new RegoError("rego_format_error", detail)] };
  }
  return { ok: true, text };
}

/**
 * The imports OPA writes. For `v0-v1` it adds `import rego.v1` (after the last `future` or
 * `rego` import, else on the first row). With `import rego.v1`, `future.keywords` imports say
 * nothing more: OPA drops them. Asked to drop v0 imports for v1, it drops both kinds. Rego v0
 * keeps its imports.
 */
function formattedImports(imports: FImport[], target: FormatTarget, dropV0Imports: boolean): FImport[] {
  const root = (imp: FImport): string[] => pathParts(imp.path);
  const isRegoV1 = (imp: FImport): boolean => {
    const parts = root(imp);
    return parts.length === 2 && parts[0] === "rego" && parts[1] === "v1";
  };
  let kept = imports;
  if (target === "v1" && dropV0Imports) kept = imports.filter((imp) => !isRegoV1(imp));
  if (target === "v0-v1" && !imports.some(isRegoV1)) kept = [...imports, regoV1Import(imports)];
  const regoV1Imported = kept.some(isRegoV1);
  if (target === "v0" && !regoV1Imported) return kept;
  const dropFuture = dropV0Imports || regoV1Imported;
  return dropFuture ? kept.filter((imp) => root(imp)[0] !== "future") : kept;
}

/** OPA's added `import rego.v1`, on the row after the last `future` or `rego` import (`nextImportLoc`). */
function regoV1Import(imports: FImport[]): FImport {
  const rows = imports
    .filter((imp) => ["future", "rego"].includes(pathParts(imp.path)[0] ?? ""))
    .map((imp) => imp.loc.row);
  const row = rows.length === 0 ? 1 : Math.max(...rows) + 1;
  const loc = { row, col: 1, offset: 0, text: "import rego.v1" };
  const path = {
    value: {
      kind: "ref" as const,
      terms: [
        { value: { kind: "var" as const, name: "rego" }, loc },
        { value: { kind: "string" as const, value: "v1" }, loc },
      ],
    },
    loc,
  };
  return { path, alias: undefined, loc, added: true };
}

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
import { parseModule } from "../syntax/index.ts";
import { recycleTokens, tokenize } from "../syntax/lexer.ts";
import { pathParts } from "./imports.ts";
import { SourceTokens } from "./spans.ts";
import { type FImport, type FModule, formatTree } from "./tree.ts";
import { FormatProblem, writeModule } from "./writer.ts";

export type FormatResult = { ok: true; text: string } | { ok: false; errors: RegoError[] };

export interface FormatOptions {
  /** Drop `import rego.v1` and `future.keywords` imports, no-ops in Rego v1 (`--drop-v0-imports`). */
  dropV0Imports?: boolean;
}

/** Formats the Rego v1 module `source` (named `file` in errors) as `opa fmt` would. */
export function formatSource(source: string, file: string, options: FormatOptions = {}): FormatResult {
  const parsed = parseModule(source, file, { annotations: false });
  if (parsed.module === undefined) return { ok: false, errors: parsed.errors };
  const stream = tokenize(source, file);
  let tree: FModule;
  try {
    tree = formatTree(parsed.module, new SourceTokens(stream));
  } finally {
    recycleTokens(stream);
  }
  tree.imports = withoutRedundantImports(tree.imports, options.dropV0Imports ?? false);
  let text: string;
  try {
    text = writeModule(tree);
  } catch (error) {
    if (!(error instanceof FormatProblem)) throw error;
    const at = error.loc && { file, line: error.loc.row, col: error.loc.col, offset: error.loc.offset };
    const code = error.message.endsWith("arity mismatch") ? "rego_type_error" : "rego_format_error";
    return { ok: false, errors: [new RegoError(code, error.message, at)] };
  }
  const check = parseModule(text, file, { annotations: false });
  if (check.module === undefined) {
    const reasons = check.errors.map((e) => e.detail).join("; ");
    // OPA checks its output the same way, and fails on the same few constructs.
    const detail = `${file}: formatted as opa fmt does, the policy no longer parses (${reasons}); opa fmt fails on it too: write that rule differently`;
    return { ok: false, errors: [new RegoError("rego_format_error", detail)] };
  }
  return { ok: true, text };
}

/**
 * With `import rego.v1`, `future.keywords` imports say nothing more: OPA drops them. Asked to
 * drop v0 imports, it drops both kinds.
 */
function withoutRedundantImports(imports: FImport[], dropV0Imports: boolean): FImport[] {
  const root = (imp: FImport): string[] => pathParts(imp.path);
  const isRegoV1 = (imp: FImport): boolean => {
    const parts = root(imp);
    return parts.length === 2 && parts[0] === "rego" && parts[1] === "v1";
  };
  const kept = dropV0Imports ? imports.filter((imp) => !isRegoV1(imp)) : imports;
  const dropFuture = dropV0Imports || kept.some(isRegoV1);
  return dropFuture ? kept.filter((imp) => root(imp)[0] !== "future") : kept;
}

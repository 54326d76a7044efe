/**
 * Rule heads. A module of its own that imports nothing of the compiler, so that the annotation
 * index (which `rego.parse_module` uses from the builtins) does not pull in the lowering stage.
 */
import type * as ast from "../syntax/ast.ts";

/** The names of a rule head's ref up to its first non-string key (`p.q[x].r` → p, q). */
export function groundPrefix(ref: ast.VarTerm | ast.RefTerm): string[] {
  if (ref.type === "var") return [ref.name];
  if (ref.head.type !== "var") return [];
  const parts = [ref.head.name];
  for (const p of ref.path) {
    if (p.type !== "string") break;
    parts.push(p.value);
  }
  return parts;
}

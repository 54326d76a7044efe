/**
 * Checking a builtin call's literal arguments against the builtin's declared types, as OPA's
 * type checker does at compile time (`count(1)` is a `rego_type_error`). Only what a literal
 * shows is checked (a scalar's type, a collection's kind); arguments whose type is known only at
 * run time are left to the builtin, which is undefined (or, strictly, an error) for a bad one.
 */
import type { OpaType } from "./types.ts";

/** The kind of value a literal argument is. */
export type LiteralKind = "null" | "boolean" | "number" | "string" | "array" | "object" | "set";

/** Whether a value of `kind` can have declared type `t`. */
export function admits(t: OpaType, kind: LiteralKind): boolean {
  switch (t.type) {
    case "any":
      if (t.of === undefined) return true;
      return (Array.isArray(t.of) ? t.of : [t.of]).some((x) => admits(x, kind));
    case "function":
      return false;
    default:
      return t.type === kind;
  }
}

/** A type as OPA prints it in error messages (`any<string, array[any]>`, `object[string: any]`). */
export function typeString(t: OpaType): string {
  switch (t.type) {
    case "any": {
      if (t.of === undefined) return "any";
      const of = Array.isArray(t.of) ? t.of : [t.of];
      return `any<${of.map(typeString).join(", ")}>`;
    }
    case "array": {
      const fixed = t.static ? `<${t.static.map(typeString).join(", ")}>` : "";
      const dynamic = t.dynamic ? `[${typeString(t.dynamic)}]` : "";
      return `array${fixed}${dynamic}`;
    }
    case "set":
      return `set[${t.of ? typeString(t.of) : "any"}]`;
    case "object": {
      const fixed = t.static
        ? `<${t.static.map((e) => `${JSON.stringify(e.key)}: ${typeString(e.value)}`).join(", ")}>`
        : "";
      const dynamic = t.dynamic ? `[${typeString(t.dynamic.key)}: ${typeString(t.dynamic.value)}]` : "";
      return `object${fixed}${dynamic}`;
    }
    case "function":
      return "function";
    default:
      return t.type;
  }
}

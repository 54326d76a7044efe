/**
 * Deprecated builtins kept for old policies: `all`, `any` (`v1/topdown/aggregates.go`), the
 * `cast_*` family (`casts.go`, deprecated in v0.13.0) and `set_diff` (`sets.go`, deprecated in
 * v0.4.2 for the `-` operator).
 */
import { makeArray, makeBoolean, makeSet, TRUE, type Value, valueEquals } from "../../plan/value.ts";
import { arg, define, setArg, typeError } from "../registry.ts";

function collectionItems(v: Value): readonly Value[] {
  if (v.type === "array") return v.items;
  if (v.type === "set") return v.elements();
  return typeError(1, v, "array", "set");
}

define("all", (args) => makeBoolean(collectionItems(arg(args, 0)).every((x) => valueEquals(x, TRUE))));
define("any", (args) => makeBoolean(collectionItems(arg(args, 0)).some((x) => valueEquals(x, TRUE))));

define("cast_array", (args) => {
  const v = arg(args, 0);
  return v.type === "array" ? v : makeArray([...collectionItems(v)]);
});
define("cast_set", (args) => {
  const v = arg(args, 0);
  return v.type === "set" ? v : makeSet(collectionItems(v));
});

for (const t of ["string", "boolean", "null", "object"] as const) {
  define(`cast_${t}`, (args) => {
    const v = arg(args, 0);
    return v.type === t ? v : typeError(1, v, t);
  });
}

define("set_diff", (args) => {
  const a = setArg(args, 0);
  const b = setArg(args, 1);
  return makeSet(a.elements().filter((x) => !b.has(x)));
});

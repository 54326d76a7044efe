/**
 * `walk(x, [path, value])`: a relation over every node of `x`, the root included (OPA's
 * `topdown/walk.go`). Relations return all their results as one array, which the planner scans
 * and unifies with the call's output one by one.
 */
import { makeArray, numberFromBigInt, type Value } from "../../plan/value.ts";
import { arg, define } from "../registry.ts";

function walk(value: Value, path: Value[], out: Value[]): void {
  out.push(makeArray([makeArray([...path]), value]));
  switch (value.type) {
    case "array":
      value.items.forEach((item, i) => {
        walk(item, [...path, numberFromBigInt(BigInt(i))], out);
      });
      break;
    case "object":
      for (const [k, v] of value.entries()) walk(v, [...path, k], out);
      break;
    case "set":
      for (const e of value.elements()) walk(e, [...path, e], out);
      break;
    default:
      break;
  }
}

define("walk", (args) => {
  const out: Value[] = [];
  walk(arg(args, 0), [], out);
  return makeArray(out);
});

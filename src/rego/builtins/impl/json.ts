/**
 * JSON builtins: `json.filter`, `json.remove`, `json.patch`, `json.marshal_with_options`,
 * `json.is_valid`, `json.verify_schema` and `json.match_schema`, following OPA's
 * `v1/topdown/json.go`, `encoding.go` and `jsonschema.go`.
 *
 * `json.patch` applies operations through a port of OPA's `internal/edittree`, so that its
 * results (including those on sets and its quirks with arrays) are OPA's. JSON Schema validation
 * uses Ajv; its errors are reported in the shape of OPA's gojsonschema results.
 */
import {
  type ArrayValue,
  asPlainInt,
  canonicalKey,
  formatValue,
  isNumberText,
  JSONSyntaxError,
  makeArray,
  makeBoolean,
  makeObject,
  makeSet,
  NULL,
  numberFromBigInt,
  type ObjectValue,
  parseJSON,
  toJSONText,
  type Value,
  valueEquals,
} from "../../plan/value.ts";
import {
  arg,
  arrayArg,
  BuiltinError,
  define,
  fail,
  objectArg,
  str,
  typeError,
  typeName,
} from "../registry.ts";
import { matchSchema, verifySchema } from "./jsonschema.ts";

function operandError(message: string): never {
  throw new BuiltinError("eval_type_error", message);
}

// ------------------------------------------------------------------------------------ paths

/** OPA's `parsePath`: a `/`-separated JSON pointer (`~1`, `~0` unescaped) or an array of segments. */
function parsePath(path: Value): Value[] | undefined {
  if (path.type === "string") {
    if (path.value === "") return [];
    return path.value
      .replace(/^\/+/, "")
      .split("/")
      .map((part) => str(part.replaceAll("~1", "/").replaceAll("~0", "~")));
  }
  if (path.type === "array") return [...path.items];
  return undefined;
}

/** OPA's `getJSONPaths`. */
function jsonPaths(operand: Value): Value[][] {
  if (operand.type !== "array" && operand.type !== "set") return typeError(2, operand, "set", "array");
  const items = operand.type === "array" ? operand.items : operand.elements();
  return items.map(
    (p) =>
      parsePath(p) ??
      operandError(
        `operand 2 must be one of {set, array} containing string paths or array of path segments but got ${typeName(p)}`,
      ),
  );
}

/** OPA's `pathsToObject`: a tree of the paths, with null at their ends. */
function pathsToObject(paths: readonly Value[][]): ObjectValue {
  const root = makeObject();
  for (const path of paths) {
    if (path.length === 0) continue;
    let node = root;
    let done = false;
    for (let i = 0; i < path.length - 1 && !done; i++) {
      const k = path[i]!;
      const child = node.get(k);
      if (child === undefined) {
        const obj = makeObject();
        node.set(k, obj);
        node = obj;
      } else if (child.type === "null") done = true;
      else if (child.type === "object") node = child;
    }
    if (!done) node.set(path[path.length - 1]!, NULL);
  }
  return root;
}

// ------------------------------------------------------------------------------------ json.filter

/** OPA's `filterObject` (`Object.Filter`). */
function filterValue(o: Value, filter: Value): Value {
  if (filter.type === "null") return o;
  if (filter.type !== "object")
    fail(`invalid filter value ${JSON.stringify(formatValue(filter))}, expected an object`);
  switch (o.type) {
    case "array": {
      const out: Value[] = [];
      o.items.forEach((item, i) => {
        const sub = filter.get(str(String(i)));
        if (sub !== undefined) out.push(filterValue(item, sub));
      });
      return makeArray(out);
    }
    case "set": {
      const out = makeSet();
      for (const t of o.elements()) {
        const sub = filter.get(t);
        if (sub !== undefined) out.add(filterValue(t, sub));
      }
      return out;
    }
    case "object": {
      const out = makeObject();
      for (const [k, v] of o.entries()) {
        const sub = filter.get(k);
        if (sub !== undefined) out.set(k, filterValue(v, sub));
      }
      return out;
    }
    default:
      return o;
  }
}

define("json.filter", (args) => {
  const obj = objectArg(args, 0);
  const filter = pathsToObject(jsonPaths(arg(args, 1)));
  return filterValue(obj, filter);
});

// ------------------------------------------------------------------------------------ json.remove

/** OPA's `jsonRemove`: `a` without the leaves (nulls) of `b`; undefined when `a` itself goes. */
function removeValue(a: Value, b: Value | undefined): Value | undefined {
  if (b === undefined) return a;
  if (b.type === "null") return undefined;
  if (b.type !== "object") return a;
  switch (a.type) {
    case "object": {
      const out = makeObject();
      for (const [k, v] of a.entries()) {
        const d = removeValue(v, b.get(k));
        if (d !== undefined) out.set(k, d);
      }
      return out;
    }
    case "set": {
      const out = makeSet();
      for (const v of a.elements()) {
        const d = removeValue(v, b.get(v));
        if (d !== undefined) out.add(d);
      }
      return out;
    }
    case "array": {
      const out: Value[] = [];
      a.items.forEach((v, i) => {
        const d = removeValue(v, b.get(str(String(i))));
        if (d !== undefined) out.push(d);
      });
      return makeArray(out);
    }
    default:
      return a;
  }
}

define("json.remove", (args) => {
  const obj = objectArg(args, 0);
  const paths = pathsToObject(jsonPaths(arg(args, 1)));
  return removeValue(obj, paths);
});

// ------------------------------------------------------------------------------------ json.patch

class PatchError extends Error {}

function isComposite(v: Value): boolean {
  return v.type === "object" || v.type === "set" || v.type === "array";
}

/** Go's `strconv.ParseInt(s, 10, 64)` for an index, else undefined. */
function parseIndex(text: string): number | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const n = BigInt(text);
  if (n < -(2n ** 63n) || n >= 2n ** 63n) return undefined;
  return Number(n);
}

/** The edit tree's `toIndex`: array indexes from numbers or strings (`-` is the end). */
function toIndex(length: number, key: Value): number {
  if (key.type === "number") {
    const i = asPlainInt(key);
    if (i === undefined) throw new PatchError("invalid number type for indexing");
    return Number(i);
  }
  if (key.type === "string") {
    if (key.value === "-") return length;
    const i = isNumberText(key.value) ? parseIndex(key.value) : undefined;
    if (i === undefined) throw new PatchError("invalid string for indexing");
    if (key.value !== "0" && key.value.startsWith("0"))
      throw new PatchError("leading zeros are not allowed in JSON paths");
    return i;
  }
  throw new PatchError("invalid type for indexing");
}

/** OPA's `Value.Find` for a one-segment reference. */
function findChild(v: Value, key: Value): Value | undefined {
  switch (v.type) {
    case "object":
      return v.get(key);
    case "set":
      return v.has(key) ? key : undefined;
    case "array": {
      if (key.type !== "number") return undefined;
      const i = asPlainInt(key);
      if (i === undefined || i < 0n || i >= BigInt(v.items.length)) return undefined;
      return v.items[Number(i)];
    }
    default:
      return undefined;
  }
}

type ChildKey = string | number;

/**
 * A port of OPA's `EditTree`: edits recorded over an original value, rendered at the end.
 * Deletions are recorded as null children.
 */
class EditTree {
  value: Value | null;
  childKeys = new Map<ChildKey, Value>();
  scalars = new Map<ChildKey, Value | null>();
  composites = new Map<ChildKey, EditTree | null>();
  eliminated: number[] = [];
  insertions: number[] = [];

  constructor(value: Value) {
    this.value = value;
    this.resetArray();
  }

  private resetArray(): void {
    if (this.value?.type === "array") {
      this.eliminated = new Array(this.value.items.length).fill(0);
      this.insertions = new Array(this.value.items.length).fill(0);
    }
  }

  private collapse(): void {
    this.value = this.render();
    this.childKeys = new Map();
    this.scalars = new Map();
    this.composites = new Map();
  }

  private setChild(k: ChildKey, value: Value): EditTree {
    const child = new EditTree(value);
    this.scalars.delete(k);
    this.composites.delete(k);
    if (isComposite(value)) this.composites.set(k, child);
    else this.scalars.set(k, value);
    return child;
  }

  insert(key: Value, value: Value): EditTree {
    const v = this.value;
    if (v === null) throw new PatchError("deleted node encountered during insert operation");
    switch (v.type) {
      case "object": {
        const k = canonicalKey(key);
        this.childKeys.set(k, key);
        return this.setChild(k, value);
      }
      case "set": {
        if (!valueEquals(key, value))
          throw new PatchError(
            `set key ${formatValue(key)} does not equal value to be inserted ${formatValue(value)}`,
          );
        if (isComposite(key)) this.collapse();
        const k = canonicalKey(key);
        this.childKeys.set(k, key);
        return this.setChild(k, value);
      }
      case "array": {
        const idx = toIndex(this.insertions.length, key);
        if (idx < 0 || idx > this.insertions.length)
          throw new PatchError("index for array insertion out of bounds");
        return this.insertArray(idx, value);
      }
      default:
        throw new PatchError(`expected composite type, found value: ${formatValue(v)}`);
    }
  }

  /** Moves the inserted children at or above `from` by `by` places. */
  private shiftChildren(from: number, by: number): void {
    const moved: Array<[number, Value | null | EditTree, boolean]> = [];
    for (let i = from; i < this.insertions.length; i++) {
      if (this.insertions[i] !== 1) continue;
      if (this.scalars.has(i)) {
        moved.push([i, this.scalars.get(i)!, false]);
        this.scalars.delete(i);
      } else if (this.composites.has(i)) {
        moved.push([i, this.composites.get(i)!, true]);
        this.composites.delete(i);
      }
    }
    for (const [i, v, composite] of moved) {
      if (composite) this.composites.set(i + by, v as EditTree);
      else this.scalars.set(i + by, v as Value);
    }
  }

  private insertArray(idx: number, value: Value): EditTree {
    const child = new EditTree(value);
    this.shiftChildren(idx, 1);
    this.insertions.splice(idx, 0, 1);
    if (isComposite(value)) this.composites.set(idx, child);
    else this.scalars.set(idx, value);
    return child;
  }

  delete(key: Value): EditTree {
    const v = this.value;
    if (v === null) throw new PatchError("deleted node encountered during delete operation");
    switch (v.type) {
      case "object": {
        const k = canonicalKey(key);
        if (this.childKeys.has(k)) {
          if (this.scalars.has(k)) {
            const child = this.scalars.get(k);
            if (child === null || child === undefined)
              throw new PatchError(
                `cannot delete the already deleted scalar node for key ${formatValue(key)}`,
              );
            this.scalars.set(k, null);
            return new EditTree(child);
          }
          const child = this.composites.get(k);
          if (child === null || child === undefined)
            throw new PatchError(
              `cannot delete the already deleted composite node for key ${formatValue(key)}`,
            );
          this.composites.set(k, null);
          return child;
        }
        return this.fallbackDelete(key);
      }
      case "set": {
        if (isComposite(key)) this.collapse();
        else {
          const k = canonicalKey(key);
          if (this.childKeys.has(k) && this.scalars.has(k)) {
            const child = this.scalars.get(k);
            if (child === null || child === undefined)
              throw new PatchError(
                `cannot delete the already deleted scalar node for key ${formatValue(key)}`,
              );
            if (valueEquals(key, child)) {
              this.scalars.set(k, null);
              return new EditTree(child);
            }
          }
        }
        return this.fallbackDelete(key);
      }
      case "array": {
        const idx = toIndex(this.insertions.length, key);
        if (idx < 0 || idx > this.insertions.length - 1)
          throw new PatchError("index for array delete out of bounds");
        this.scalars.delete(idx);
        this.composites.delete(idx);
        this.shiftChildren(idx + 1, -1);
        if (this.insertions[idx] === 0) {
          let zeroes = 1;
          for (let i = 0; i < idx; i++) if (this.insertions[i] === 0) zeroes++;
          let seen = 0;
          for (let i = 0; i < this.eliminated.length; i++) {
            if (this.eliminated[i] === 0) seen++;
            if (seen === zeroes) {
              this.eliminated[i] = 1;
              break;
            }
          }
        }
        this.insertions.splice(idx, 1);
        return this;
      }
      default:
        throw new PatchError(`expected composite type, found value: ${formatValue(v)}`);
    }
  }

  private fallbackDelete(key: Value): EditTree {
    const found = findChild(this.value!, key);
    if (found === undefined)
      throw new PatchError(`cannot delete child key ${formatValue(key)} that does not exist`);
    const k = canonicalKey(key);
    this.childKeys.set(k, key);
    if (isComposite(found)) this.composites.set(k, null);
    else this.scalars.set(k, null);
    return new EditTree(found);
  }

  unfold(path: readonly Value[]): EditTree {
    if (path.length === 0) return this;
    const v = this.value;
    if (v === null) throw new PatchError("nil value encountered where composite value was expected");
    const key = path[0]!;
    const rest = path.slice(1);
    switch (v.type) {
      case "object": {
        const k = canonicalKey(key);
        if (this.childKeys.has(k)) {
          if (this.scalars.has(k)) {
            const term = this.scalars.get(k);
            if (term === null || term === undefined)
              throw new PatchError(
                `cannot unfold the already deleted scalar node for key ${formatValue(key)}`,
              );
            return new EditTree(term).unfold(rest);
          }
          const child = this.composites.get(k);
          if (child === null || child === undefined)
            throw new PatchError(
              `cannot unfold the already deleted composite node for key ${formatValue(key)}`,
            );
          return child.unfold(rest);
        }
        const found = v.get(key);
        if (found !== undefined) return this.insert(key, found).unfold(rest);
        throw new PatchError(`path ${formatValue(key)} does not exist in object term ${formatValue(v)}`);
      }
      case "set": {
        if (isComposite(key)) this.collapse();
        else {
          const k = canonicalKey(key);
          if (this.childKeys.has(k) && this.scalars.has(k)) {
            const term = this.scalars.get(k);
            if (term === null || term === undefined)
              throw new PatchError("nil value encountered where composite value was expected");
            return new EditTree(term).unfold(rest);
          }
        }
        const found = findChild(this.value!, key);
        if (found !== undefined) return this.insert(key, found).unfold(rest);
        throw new PatchError(
          `path ${formatValue(key)} does not exist in set term ${formatValue(this.value!)}`,
        );
      }
      case "array": {
        const idx = toIndex(this.insertions.length, key);
        if (this.scalars.has(idx)) return new EditTree(this.scalars.get(idx)!).unfold(rest);
        const composite = this.composites.get(idx);
        if (composite) return composite.unfold(rest);
        // As OPA does, the fallback reads the original array at the index.
        const found = findChild(v, numberFromBigInt(BigInt(idx)));
        if (found !== undefined) {
          const index = numberFromBigInt(BigInt(idx));
          this.delete(index);
          return this.insert(index, found).unfold(rest);
        }
        throw new PatchError(`path ${idx} does not exist in array term ${formatValue(v)}`);
      }
      default:
        throw new PatchError(
          `expected composite type for path ${formatValue(key)}, found value: ${formatValue(v)}`,
        );
    }
  }

  render(): Value | null {
    const v = this.value;
    if (v === null) return null;
    switch (v.type) {
      case "object": {
        if (this.childKeys.size === 0) return v;
        const out = makeObject();
        for (const [k, key] of this.childKeys) {
          if (this.scalars.has(k)) {
            const term = this.scalars.get(k);
            if (term) out.set(key, term);
          } else {
            const child = this.composites.get(k);
            const rendered = child?.render();
            if (rendered) out.set(key, rendered);
          }
        }
        for (const [k, x] of v.entries()) if (!this.childKeys.has(canonicalKey(k))) out.set(k, x);
        return out;
      }
      case "set": {
        if (this.childKeys.size === 0) return v;
        const out = makeSet();
        for (const [k] of this.childKeys) {
          if (this.scalars.has(k)) {
            const term = this.scalars.get(k);
            if (term) out.add(term);
          } else {
            const rendered = this.composites.get(k)?.render();
            if (rendered) out.add(rendered);
          }
        }
        for (const x of v.elements()) if (!this.childKeys.has(canonicalKey(x))) out.add(x);
        return out;
      }
      case "array": {
        const out: Value[] = [];
        let e = 0;
        for (let i = 0; i < this.insertions.length; i++) {
          if (this.insertions[i] === 0) {
            while (e < this.eliminated.length && this.eliminated[e] !== 0) e++;
            if (e >= this.eliminated.length) throw new PatchError(`too many eliminated indexes in array`);
            out.push(v.items[e]!);
            e++;
          } else if (this.scalars.has(i)) out.push(this.scalars.get(i)!);
          else {
            const rendered = this.composites.get(i)?.render();
            if (!rendered) throw new PatchError(`invalid index ${i} does not exist in array`);
            out.push(rendered);
          }
        }
        return makeArray(out);
      }
      default:
        return v;
    }
  }

  insertAtPath(path: readonly Value[], value: Value): void {
    if (path.length === 0) {
      this.value = value;
      this.childKeys = new Map();
      this.scalars = new Map();
      this.composites = new Map();
      this.resetArray();
      return;
    }
    this.unfold(path.slice(0, -1)).insert(path[path.length - 1]!, value);
  }

  deleteAtPath(path: readonly Value[]): void {
    if (path.length === 0) {
      if (this.value === null) throw new PatchError("deleted node encountered during delete operation");
      this.value = null;
      return;
    }
    this.unfold(path.slice(0, -1)).delete(path[path.length - 1]!);
  }

  renderAtPath(path: readonly Value[]): Value | null {
    return this.unfold(path).render();
  }
}

interface PatchOp {
  op: string;
  path: Value;
  from?: Value;
  value?: Value;
}

const PATCH_OPS = new Set(["add", "remove", "replace", "move", "copy", "test"]);

/** OPA's `getPatch`. */
function getPatch(o: ObjectValue): PatchOp {
  const attr = (name: string): Value => {
    const v = o.get(str(name));
    if (v === undefined) throw new PatchError(`missing '${name}' attribute`);
    return v;
  };
  const opTerm = attr("op");
  if (opTerm.type !== "string") throw new PatchError("attribute 'op' must be a string");
  const op = opTerm.value;
  if (!PATCH_OPS.has(op)) throw new PatchError(`unrecognized op '${op}'`);
  const patch: PatchOp = { op, path: attr("path") };
  if (op === "move" || op === "copy") patch.from = attr("from");
  if (op === "add" || op === "replace" || op === "test") patch.value = attr("value");
  return patch;
}

function patchPath(v: Value): Value[] {
  const path = parsePath(v);
  if (path === undefined)
    throw new PatchError(
      `operand 2 must be one of {set, array} containing string paths or array of path segments but got ${typeName(v)}`,
    );
  return path;
}

function rendered(v: Value | null): Value {
  if (v === null) throw new PatchError("nil value rendered");
  return v;
}

/** OPA's `applyPatches`. */
function applyPatches(source: Value, operations: ArrayValue): Value | undefined {
  const et = new EditTree(source);
  for (const item of operations.items) {
    if (item.type !== "object")
      throw new PatchError(
        "must be an array of JSON-Patch objects, but at least one element is not an object",
      );
    const patch = getPatch(item);
    const path = patchPath(patch.path);
    switch (patch.op) {
      case "add":
        et.insertAtPath(path, patch.value!);
        break;
      case "remove":
        et.deleteAtPath(path);
        break;
      case "replace":
        et.deleteAtPath(path);
        et.insertAtPath(path, patch.value!);
        break;
      case "move": {
        const from = patchPath(patch.from!);
        const chunk = rendered(et.renderAtPath(from));
        et.deleteAtPath(from);
        et.insertAtPath(path, chunk);
        break;
      }
      case "copy": {
        const from = patchPath(patch.from!);
        et.insertAtPath(path, rendered(et.renderAtPath(from)));
        break;
      }
      case "test": {
        const chunk = rendered(et.renderAtPath(path));
        if (!valueEquals(chunk, patch.value!)) throw new PatchError("value from EditTree != patch value");
        break;
      }
    }
  }
  return et.render() ?? undefined;
}

define("json.patch", (args) => {
  const target = arg(args, 0);
  const operations = arrayArg(args, 1);
  try {
    return applyPatches(target, operations);
  } catch (e) {
    // OPA's json.patch is undefined (not an error) when a patch cannot be applied.
    if (e instanceof PatchError) return undefined;
    throw e;
  }
});

// ------------------------------------------------------------------------------------ marshal

/** Go's `json.Indent` of compact JSON text (the first line gets no prefix). */
export function indentJSON(compact: string, prefix: string, indent: string): string {
  let out = "";
  let depth = 0;
  let needIndent = false;
  let inString = false;
  const newline = () => {
    out += `\n${prefix}${indent.repeat(depth)}`;
  };
  for (let i = 0; i < compact.length; i++) {
    const c = compact[i]!;
    if (inString) {
      out += c;
      if (c === "\\") out += compact[++i] ?? "";
      else if (c === '"') inString = false;
      continue;
    }
    if (c === " " || c === "\t" || c === "\n" || c === "\r") continue;
    if (needIndent && c !== "]" && c !== "}") {
      needIndent = false;
      depth++;
      newline();
    }
    switch (c) {
      case '"':
        inString = true;
        out += c;
        break;
      case "{":
      case "[":
        needIndent = true;
        out += c;
        break;
      case ",":
        out += c;
        newline();
        break;
      case ":":
        out += ": ";
        break;
      case "}":
      case "]":
        if (needIndent) needIndent = false;
        else {
          depth--;
          newline();
        }
        out += c;
        break;
      default:
        out += c;
    }
  }
  return out;
}

define("json.marshal_with_options", (args) => {
  const value = arg(args, 0);
  const opts = objectArg(args, 1);
  let indent = "\t";
  let prefix = "";
  let implicitPretty = false;
  let explicit: boolean | undefined;
  opts.entries().forEach(([k, v], idx) => {
    if (k.type !== "string")
      operandError(
        `operand 2 failed to stringify key ${formatValue(k)} at index ${idx}: operand ${idx} must be string but got ${typeName(k)}`,
      );
    const key = k.value;
    const quoted = formatValue(k);
    switch (key) {
      case "prefix":
      case "indent":
        if (v.type !== "string")
          operandError(
            `operand 2 key ${quoted} failed cast to string: operand ${idx} must be string but got ${typeName(v)}`,
          );
        if (key === "prefix") prefix = v.value;
        else indent = v.value;
        implicitPretty = true;
        break;
      case "pretty":
        if (v.type !== "boolean") operandError(`operand 2 key ${quoted} failed cast to bool`);
        explicit = v.value;
        break;
      default:
        operandError(`operand 2 object contained unknown key ${quoted}`);
    }
  });
  const pretty = explicit ?? implicitPretty;
  const compact = toJSONText(value);
  return str(pretty ? prefix + indentJSON(compact, prefix, indent) : compact);
});

// ------------------------------------------------------------------------------------ validity

/** Go's `json.Valid`. */
export function isValidJSON(s: string): boolean {
  try {
    parseJSON(s);
    return true;
  } catch (e) {
    if (e instanceof JSONSyntaxError) return false;
    throw e;
  }
}

define("json.is_valid", (args) => {
  const v = arg(args, 0);
  return makeBoolean(v.type === "string" && isValidJSON(v.value));
});

// ------------------------------------------------------------------------------------ JSON Schema

define("json.verify_schema", (args) => verifySchema(arg(args, 0)));
define("json.match_schema", (args) => matchSchema(arg(args, 0), arg(args, 1)));

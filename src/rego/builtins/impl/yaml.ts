/**
 * YAML builtins (`yaml.is_valid`, `yaml.marshal`, `yaml.unmarshal`), following OPA's
 * `v1/topdown/encoding.go`, which goes through `sigs.k8s.io/yaml` (go-yaml v2, YAML 1.1
 * scalars: `yes`/`on` are booleans) and JSON: map keys become strings, every document of the
 * input must parse and the first one is the value, timestamps stay strings.
 */
import { type DocumentOptions, isMap, isScalar, isSeq, type Node, parseAllDocuments, stringify } from "yaml";
import {
  makeArray,
  makeBoolean,
  makeObject,
  makeString,
  NULL,
  numberFromBigInt,
  numberFromFloat,
  toJSONText,
  type Value,
} from "../../plan/value.ts";
import { arg, define, fail, str, stringArg } from "../registry.ts";

class YAMLError extends Error {}

const PARSE_OPTIONS: DocumentOptions & Parameters<typeof parseAllDocuments>[1] = {
  version: "1.1",
  intAsBigInt: true,
  uniqueKeys: false,
  merge: true,
  customTags: (tags) =>
    tags.filter(
      (t) =>
        typeof t === "string" ||
        (t.tag !== "tag:yaml.org,2002:timestamp" && t.tag !== "tag:yaml.org,2002:binary"),
    ),
};

/** A scalar as Go's YAML → JSON conversion gives it. */
function scalarValue(v: unknown): Value {
  if (v === null || v === undefined) return NULL;
  if (typeof v === "boolean") return makeBoolean(v);
  if (typeof v === "bigint") return numberFromBigInt(v);
  if (typeof v === "number") {
    if (!Number.isFinite(v))
      throw new YAMLError(`json: unsupported value: ${v > 0 ? "+Inf" : v < 0 ? "-Inf" : "NaN"}`);
    return numberFromFloat(v);
  }
  if (typeof v === "string") return makeString(v);
  return makeString(String(v));
}

/** sigs.k8s.io/yaml's key conversion: scalars become their text. */
function keyText(node: unknown): string {
  if (node === null || node === undefined) return "null";
  if (isScalar(node)) {
    const v = node.value;
    if (v === null || v === undefined) return "null";
    if (typeof v === "string") return v;
    if (typeof v === "boolean" || typeof v === "bigint") return String(v);
    if (typeof v === "number") return toJSONText(numberFromFloat(v));
    return String(v);
  }
  throw new YAMLError("error converting YAML to JSON: unsupported map key");
}

function convert(node: Node | null | undefined): Value {
  if (node === null || node === undefined) return NULL;
  if (isMap(node)) {
    const obj = makeObject();
    for (const pair of node.items) obj.set(str(keyText(pair.key)), convert(pair.value as Node | null));
    return obj;
  }
  if (isSeq(node)) return makeArray(node.items.map((x) => convert(x as Node | null)));
  if (isScalar(node)) return scalarValue(node.value);
  // An alias: resolve it through the document's JSON form.
  throw new YAMLError("unsupported YAML node");
}

/** Parses every document; the first one's value (null for an empty input). */
function parseYAML(text: string): Value {
  const docs = parseAllDocuments(text, PARSE_OPTIONS);
  const list = Array.isArray(docs) ? docs : [];
  for (const d of list) {
    const e = d.errors[0];
    if (e) throw new YAMLError(`yaml: ${e.message.split("\n")[0]}`);
  }
  const first = list[0];
  if (!first) return NULL;
  // Resolve aliases and merge keys into plain data first, then convert with the nodes' types.
  const resolved = first.toJS({ maxAliasCount: 10_000 });
  return fromResolved(resolved, first.contents);
}

/** Converts resolved data (aliases expanded); the node tree is used when it has no aliases. */
function fromResolved(data: unknown, node: Node | null): Value {
  if (node && !containsAlias(node)) return convert(node);
  return plain(data);
}

function containsAlias(node: unknown): boolean {
  if (isMap(node))
    return node.items.some((p) => containsAlias(p.key) || containsAlias(p.value) || isMergeKey(p.key));
  if (isSeq(node)) return node.items.some(containsAlias);
  return !isScalar(node) && node !== null && node !== undefined;
}

function isMergeKey(key: unknown): boolean {
  return isScalar(key) && key.value === "<<";
}

function plain(x: unknown): Value {
  if (x instanceof Map) {
    const obj = makeObject();
    for (const [k, v] of x) obj.set(str(plainKey(k)), plain(v));
    return obj;
  }
  if (Array.isArray(x)) return makeArray(x.map(plain));
  if (typeof x === "object" && x !== null) {
    const obj = makeObject();
    for (const [k, v] of Object.entries(x)) obj.set(str(k), plain(v));
    return obj;
  }
  return scalarValue(x);
}

function plainKey(k: unknown): string {
  if (k === null || k === undefined) return "null";
  if (typeof k === "string") return k;
  if (typeof k === "number") return toJSONText(numberFromFloat(k));
  if (typeof k === "boolean" || typeof k === "bigint") return String(k);
  throw new YAMLError("error converting YAML to JSON: unsupported map key");
}

function unmarshal(text: string): Value {
  try {
    return parseYAML(text);
  } catch (e) {
    if (e instanceof YAMLError) return fail(e.message);
    if (e instanceof Error && e.name.startsWith("YAML")) return fail(`yaml: ${e.message}`);
    throw e;
  }
}

define("yaml.unmarshal", (args) => unmarshal(stringArg(args, 0)));

define("yaml.is_valid", (args) => {
  const v = arg(args, 0);
  if (v.type !== "string") return makeBoolean(false);
  try {
    parseYAML(v.value);
    return makeBoolean(true);
  } catch (e) {
    if (e instanceof YAMLError || (e instanceof Error && e.name.startsWith("YAML")))
      return makeBoolean(false);
    throw e;
  }
});

define("yaml.marshal", (args) => {
  // As OPA does: the value as JSON (sets become arrays), then YAML in go-yaml v2's style:
  // sorted keys, sequences not indented under their key, no line folding.
  const data: unknown = JSON.parse(toJSONText(arg(args, 0)));
  return str(
    stringify(data, {
      version: "1.1",
      sortMapEntries: true,
      indentSeq: false,
      lineWidth: 0,
      minContentWidth: 0,
      singleQuote: false,
      nullStr: "null",
    }),
  );
});

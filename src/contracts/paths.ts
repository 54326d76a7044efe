/**
 * Path arguments: a string property of a contract's input schema declared
 * `{type: string, format: path, x-writ-root: /srv/docs}` (and optionally `x-writ-relative: true`)
 * is normalized before the policy and the backend see it (src/normalize/path.ts). This module
 * reads those declarations out of a schema, as a tree mirroring the arguments, and says what is
 * wrong with a bad one.
 *
 * Declarations are honoured under `properties`, `additionalProperties`, `items` and `prefixItems`
 * only, the keywords whose place in the arguments does not depend on which branch matches: a
 * declaration anywhere else (`anyOf`, `$defs`, …) is a configuration error, never ignored.
 */
import path from "node:path/posix";
import { escapeToken } from "../core/json-pointer.ts";

/** The keyword naming the root a path is confined to (an absolute, normalized path). */
export const ROOT_KEYWORD = "x-writ-root";
/** The keyword asking for paths relative to the root (`src/a.ts`, `.` for the root) instead of absolute ones. */
export const RELATIVE_KEYWORD = "x-writ-relative";
/** The JSON Schema `format` that marks a string as a path. */
export const PATH_FORMAT = "path";

/** How one path argument is normalized. */
export interface PathDeclaration {
  /** Absolute and normalized, e.g. `/srv/docs` or `/`. */
  root: string;
  /** Whether the normalized value is relative to the root (`a/b`, `.`) rather than absolute (`/srv/docs/a/b`). */
  relative: boolean;
}

/** Where the paths are in a contract's arguments: a tree following the input schema's shape. */
export interface PathShape {
  /** This value is a path. */
  path?: PathDeclaration;
  /** Named properties with paths in them (a map: a property may be named `__proto__`). */
  properties?: Map<string, PathShape>;
  /** Other properties: named in none of `named`, matching none of `patterns`. */
  additionalProperties?: PathShape;
  /** Every name of the schema's `properties` (set with `additionalProperties`). */
  named?: string[];
  /** The schema's `patternProperties`, compiled as Ajv does (set with `additionalProperties`). */
  patterns?: RegExp[];
  /** Array elements by position (the whole `prefixItems`); an undefined entry holds no path. */
  prefixItems?: Array<PathShape | undefined>;
  /** Array elements after the `prefixItems`. */
  items?: PathShape;
}

/** A bad declaration: where it is in the schema (JSON Pointer) and what to do. */
export interface PathProblem {
  pointer: string;
  message: string;
}

type Schema = Record<string, unknown>;

export function isSchema(value: unknown): value is Schema {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function declares(schema: Schema): boolean {
  return (
    schema.format === PATH_FORMAT ||
    Object.hasOwn(schema, ROOT_KEYWORD) ||
    Object.hasOwn(schema, RELATIVE_KEYWORD)
  );
}

/** The written-out normal form of a root: what `root` must equal. */
function normalRoot(root: string): string {
  const normal = path.normalize(root.normalize("NFC"));
  return normal.length > 1 && normal.endsWith("/") ? normal.slice(0, -1) : normal;
}

function rootProblem(root: unknown): string | undefined {
  if (typeof root !== "string") {
    return `must be the absolute path the ${PATH_FORMAT} is confined to, e.g. /srv/docs (got ${JSON.stringify(root) ?? "nothing"})`;
  }
  if (!root.startsWith("/")) {
    return `must be an absolute path such as /srv/docs, not ${JSON.stringify(root)}: relative paths are resolved against it`;
  }
  if (/[\p{Cc}\\%]/u.test(root)) {
    return "must not hold control characters, backslashes or percent-encodings";
  }
  const normal = normalRoot(root);
  if (normal !== root) return `must be written in normal form: ${normal}`;
  return undefined;
}

/** The declaration of a schema marked `format: path`, or the problems that make it unusable. */
function declarationOf(
  schema: Schema,
  pointer: string,
  problems: PathProblem[],
): PathDeclaration | undefined {
  const found: PathProblem[] = [];
  if (schema.format !== PATH_FORMAT) {
    for (const keyword of [ROOT_KEYWORD, RELATIVE_KEYWORD]) {
      if (Object.hasOwn(schema, keyword)) {
        found.push({
          pointer: `${pointer}/${keyword}`,
          message: `applies to a path only: add format: ${PATH_FORMAT} and type: string, or remove ${keyword}`,
        });
      }
    }
    problems.push(...found);
    return undefined;
  }
  if (schema.type !== "string") {
    found.push({
      pointer: `${pointer}/format`,
      message: `format: ${PATH_FORMAT} needs type: string (got type ${JSON.stringify(schema.type) ?? "unset"}); for a list of paths declare {type: array, items: {type: string, format: ${PATH_FORMAT}, ${ROOT_KEYWORD}: …}}`,
    });
  }
  const root = schema[ROOT_KEYWORD];
  if (!Object.hasOwn(schema, ROOT_KEYWORD)) {
    found.push({
      pointer,
      message: `format: ${PATH_FORMAT} needs ${ROOT_KEYWORD}, the absolute path its values are confined to (e.g. ${ROOT_KEYWORD}: /srv/docs)`,
    });
  } else {
    const wrong = rootProblem(root);
    if (wrong !== undefined) found.push({ pointer: `${pointer}/${ROOT_KEYWORD}`, message: wrong });
  }
  const relative = schema[RELATIVE_KEYWORD] ?? false;
  if (typeof relative !== "boolean") {
    found.push({ pointer: `${pointer}/${RELATIVE_KEYWORD}`, message: "must be true or false" });
  }
  problems.push(...found);
  if (found.length > 0 || typeof root !== "string" || typeof relative !== "boolean") return undefined;
  return { root, relative };
}

/** The shape of the paths under `schema` (undefined when there are none); records what it reached. */
function shapeOf(
  schema: unknown,
  pointer: string,
  reached: Set<string>,
  problems: PathProblem[],
): PathShape | undefined {
  if (!isSchema(schema)) return undefined;
  reached.add(pointer);
  const shape: PathShape = {};
  if (declares(schema)) {
    const declaration = declarationOf(schema, pointer, problems);
    if (declaration !== undefined) shape.path = declaration;
  }
  const { properties, additionalProperties, patternProperties, prefixItems, items } = schema;
  if (isSchema(properties)) {
    const named = new Map<string, PathShape>();
    for (const [name, sub] of Object.entries(properties)) {
      const inner = shapeOf(sub, `${pointer}/properties/${escapeToken(name)}`, reached, problems);
      if (inner !== undefined) named.set(name, inner);
    }
    if (named.size > 0) shape.properties = named;
  }
  const other = shapeOf(additionalProperties, `${pointer}/additionalProperties`, reached, problems);
  if (other !== undefined) {
    shape.additionalProperties = other;
    shape.named = isSchema(properties) ? Object.keys(properties) : [];
    shape.patterns = isSchema(patternProperties)
      ? Object.keys(patternProperties).flatMap((pattern) => {
          try {
            return [new RegExp(pattern, "u")];
          } catch {
            return []; // Ajv refuses the schema and says why.
          }
        })
      : [];
  }
  const positional = Array.isArray(prefixItems)
    ? prefixItems.map((sub, index) => shapeOf(sub, `${pointer}/prefixItems/${index}`, reached, problems))
    : [];
  const rest = shapeOf(items, `${pointer}/items`, reached, problems);
  // Kept whole when `items` holds paths: it applies only after the prefix.
  if (rest !== undefined || positional.some((inner) => inner !== undefined)) shape.prefixItems = positional;
  if (rest !== undefined) shape.items = rest;
  return Object.keys(shape).length > 0 ? shape : undefined;
}

/** JSON Schema 2020-12 applicators: keywords whose values are schemas, maps of schemas or lists of them. */
const schemaMaps = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const schemaLists = ["allOf", "anyOf", "oneOf", "prefixItems"];
const schemaValues = [
  "items",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
  "contentSchema",
];

/**
 * The pointers of every subschema of `schema` for which `marked` holds, wherever it is (under any
 * applicator, `$defs` included; not inside `const`, `enum` or `default` values, which are data).
 */
export function schemaSites(
  schema: unknown,
  marked: (subschema: Schema) => boolean,
  pointer = "",
  sites: string[] = [],
): string[] {
  if (!isSchema(schema)) return sites;
  if (marked(schema)) sites.push(pointer);
  for (const keyword of schemaMaps) {
    const map = schema[keyword];
    if (!isSchema(map)) continue;
    for (const [name, sub] of Object.entries(map)) {
      schemaSites(sub, marked, `${pointer}/${keyword}/${escapeToken(name)}`, sites);
    }
  }
  for (const keyword of schemaLists) {
    const list = schema[keyword];
    if (!Array.isArray(list)) continue;
    for (const [index, sub] of list.entries())
      schemaSites(sub, marked, `${pointer}/${keyword}/${index}`, sites);
  }
  for (const keyword of schemaValues) schemaSites(schema[keyword], marked, `${pointer}/${keyword}`, sites);
  return sites;
}

/**
 * The paths an input schema declares, and the problems of its declarations (pointers into the
 * schema). A declaration that Writ would not reach is a problem, so that no path goes through
 * unnormalized while its author believes otherwise.
 */
export function pathShape(schema: Schema): { shape: PathShape | undefined; problems: PathProblem[] } {
  const problems: PathProblem[] = [];
  const reached = new Set<string>();
  const shape = shapeOf(schema, "", reached, problems);
  for (const site of schemaSites(schema, declares)) {
    if (reached.has(site)) continue;
    problems.push({
      pointer: site,
      message: `Writ normalizes paths declared under properties, additionalProperties, items or prefixItems only; move this format: ${PATH_FORMAT} there (not under a combinator, $defs or $ref)`,
    });
  }
  return { shape, problems };
}

/**
 * Whether `value` is already in normal form (for some root; src/normalize/path.ts makes it): what a `format: path` string must
 * be once normalized. The JSON Schema check of the normalized arguments uses it, so a path that
 * escaped normalization would fail validation instead of reaching the policy.
 */
export function isNormalPath(value: string): boolean {
  if (value === "." || value === "/") return true;
  if (value === "" || /[\p{Cc}\\%]/u.test(value) || value !== value.normalize("NFC")) {
    return false;
  }
  const parts = (value.startsWith("/") ? value.slice(1) : value).split("/");
  return parts.every((part) => part !== "" && part !== "." && part !== "..");
}

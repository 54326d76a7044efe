/**
 * Data documents as OPA's bundles hold them: `data.json` (or `data.yaml`, `data.yml`) files,
 * each merged into `data` at the path of its folder (`roles/admin/data.json` → `data.roles.admin`).
 * Objects merge key by key; two files that set the same non-object value conflict.
 */
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { BundleError } from "./error.ts";

export type DataObject = Record<string, unknown>;

const DATA_FILE_NAMES: ReadonlySet<string> = new Set(["data.json", "data.yaml", "data.yml"]);

const jsonSchema = z.json();

/** Whether a file named `name` (a path or a base name) is a data file OPA merges into `data`. */
export function isDataFile(name: string): boolean {
  return DATA_FILE_NAMES.has(path.posix.basename(name.replaceAll("\\", "/")));
}

/** A JSON object (not an array, not null). */
export function isDataObject(value: unknown): value is DataObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The JSON value of a data file's text: YAML when `file` ends in `.yaml` or `.yml`, JSON
 * otherwise. `file` names the file in errors.
 */
export function parseDataText(file: string, text: string): unknown {
  const yaml = /\.ya?ml$/i.test(file);
  let value: unknown;
  try {
    value = yaml ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new BundleError(`${file}: not valid ${yaml ? "YAML" : "JSON"} (${reason}): fix the file`);
  }
  if (!yaml) return value;
  // YAML can say more than JSON (empty documents, non-finite numbers); data must be JSON.
  const json = jsonSchema.safeParse(value ?? {});
  if (!json.success) {
    throw new BundleError(
      `${file}: the YAML document is not plain JSON data (${json.error.issues[0]?.message})`,
    );
  }
  return json.data;
}

/**
 * The `data` path of a data file: the segments of its folder, without leading `/` or `.`
 * (`/roles/data.json` → `["roles"]`, `data.json` → `[]`).
 */
export function dataPathOf(file: string): string[] {
  const dir = path.posix.dirname(file.replaceAll("\\", "/")).replace(/^[/.]+/, "");
  return dir === "" ? [] : dir.split("/");
}

/** Sets an own property, so that a `__proto__` key from a file stays a key. */
function setOwn(target: DataObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function getOwn(target: DataObject, key: string): unknown {
  return Object.hasOwn(target, key) ? target[key] : undefined;
}

/** A deep copy of a data object whose keys are all own properties. */
function copyObject(source: DataObject): DataObject {
  const out: DataObject = {};
  for (const [k, v] of Object.entries(source)) setOwn(out, k, isDataObject(v) ? copyObject(v) : v);
  return out;
}

function mergeInto(target: DataObject, source: DataObject, at: string[], origin: string): void {
  for (const [key, value] of Object.entries(source)) {
    const here = [...at, key];
    if (!Object.hasOwn(target, key)) {
      setOwn(target, key, isDataObject(value) ? copyObject(value) : value);
      continue;
    }
    const existing = getOwn(target, key);
    if (isDataObject(existing) && isDataObject(value)) {
      mergeInto(existing, value, here, origin);
      continue;
    }
    throw new BundleError(
      `${origin}: data.${here.join(".")} is already set by another data file: keep each value in one file`,
    );
  }
}

/**
 * Merges `value` into `target` at `at` (a `data` path), as OPA does when it loads a data file.
 * `origin` names the file in errors. The value at the root (an empty path) must be an object.
 */
export function insertData(target: DataObject, at: readonly string[], value: unknown, origin: string): void {
  let tree: unknown = value;
  for (let i = at.length - 1; i >= 0; i--) {
    const level: DataObject = {};
    setOwn(level, at[i]!, tree);
    tree = level;
  }
  if (!isDataObject(tree)) {
    throw new BundleError(
      `${origin}: a data file at the root of a bundle must hold a JSON object, not ${describe(tree)}: wrap the value in an object or move the file into a folder`,
    );
  }
  mergeInto(target, tree, [], origin);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

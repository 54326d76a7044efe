/**
 * Structural comparison of AST nodes that ignores source positions (`loc`) and comments, the
 * notion of "same AST" used by the printer's round-trip guarantee and by tests.
 */

/** Keys that describe where a node came from rather than what it is. */
const IGNORED_KEYS = new Set(["loc", "comments"]);

/** `T` without its `loc` and `comments` properties, at every depth. */
export type Unlocated<T> = T extends readonly unknown[]
  ? { [I in keyof T]: Unlocated<T[I]> }
  : T extends object
    ? { [K in keyof T as K extends "loc" | "comments" ? never : K]: Unlocated<T[K]> }
    : T;

/** A deep copy of `node` without `loc` and `comments`; properties set to `undefined` are dropped. */
export function stripLocations<T>(node: T): Unlocated<T> {
  return strip(node) as Unlocated<T>;
}

function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== "object") return value;
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (!IGNORED_KEYS.has(key) && field !== undefined) copy[key] = strip(field);
  }
  return copy;
}

/** Whether two nodes are equal ignoring `loc`, `comments` and properties set to `undefined`. */
export function astEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => astEqual(item, b[i]));
  }
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object" || Array.isArray(b))
    return false;
  const left = definedKeys(a);
  const right = definedKeys(b);
  if (left.length !== right.length) return false;
  const fieldsOfB = b as Record<string, unknown>;
  const fieldsOfA = a as Record<string, unknown>;
  return left.every((key) => key in fieldsOfB && astEqual(fieldsOfA[key], fieldsOfB[key]));
}

function definedKeys(value: object): string[] {
  return Object.entries(value)
    .filter(([key, field]) => !IGNORED_KEYS.has(key) && field !== undefined)
    .map(([key]) => key);
}

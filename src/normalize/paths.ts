/**
 * Every path a contract declares in a call's arguments, normalized in place (src/normalize/path.ts)
 * before the arguments are checked against the schema, digested, shown to the policy and sent to
 * the backend: one form everywhere.
 */
import type { PathDeclaration, PathShape } from "../contracts/paths.ts";
import { formatPointer } from "./json-pointer.ts";
import { normalizePath, type PathRefusalCode } from "./path.ts";

/** A path that cannot be normalized: where it is in the arguments, and why. */
export interface PathRefusal {
  /** JSON Pointer into the arguments, e.g. `/paths/2`. */
  pointer: string;
  code: PathRefusalCode;
  message: string;
  declaration: PathDeclaration;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The shape of the property `key` of an object shaped `shape`, as JSON Schema assigns it. */
function propertyShape(shape: PathShape, key: string): PathShape | undefined {
  const named = shape.properties?.get(key);
  if (named !== undefined) return named;
  if (shape.additionalProperties === undefined) return undefined;
  if (shape.named?.includes(key)) return undefined;
  if (shape.patterns?.some((pattern) => pattern.test(key))) return undefined;
  return shape.additionalProperties;
}

/**
 * The value normalized: a string declared a path in normal form, containers walked. A value of
 * another type than the schema says is left as is (the schema check that follows refuses it).
 */
function normalizeValue(
  value: unknown,
  shape: PathShape,
  tokens: string[],
  refusals: PathRefusal[],
): unknown {
  if (typeof value === "string") {
    if (shape.path === undefined) return value;
    const result = normalizePath(value, shape.path);
    if (result.ok) return result.path;
    refusals.push({
      pointer: formatPointer(tokens),
      code: result.code,
      message: result.message,
      declaration: shape.path,
    });
    return value;
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const inner = index < (shape.prefixItems?.length ?? 0) ? shape.prefixItems?.[index] : shape.items;
      if (inner !== undefined)
        value[index] = normalizeValue(item, inner, [...tokens, String(index)], refusals);
    }
    return value;
  }
  if (isRecord(value)) {
    for (const [key, item] of Object.entries(value)) {
      const inner = propertyShape(shape, key);
      if (inner === undefined) continue;
      // defineProperty: a key named __proto__ stays an own property.
      Object.defineProperty(value, key, {
        value: normalizeValue(item, inner, [...tokens, key], refusals),
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
  }
  return value;
}

/** Normalizes the paths of `args` in place; the paths it could not normalize, in argument order. */
export function normalizePaths(args: Record<string, unknown>, shape: PathShape): PathRefusal[] {
  const refusals: PathRefusal[] = [];
  normalizeValue(args, shape, [], refusals);
  return refusals;
}

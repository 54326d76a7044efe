/**
 * Redaction of the policy input before it is logged (DESIGN section 8). Three kinds of rules, in
 * this order: the action's data classification erases its arguments; configured JSON Pointers are
 * erased or masked; secret detectors mask credentials anywhere in the input. The pointers of what
 * was erased or masked are returned so the log says what it does not show.
 */

import { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import { isRecord } from "../core/json.ts";
import { formatPointer, unescapeToken } from "../core/json-pointer.ts";
import { isSensitiveKey, MASK, scrubString } from "./detectors.ts";

const jsonPointerSchema = z
  .string()
  .regex(/^(?:\/(?:[^~/]|~[01])*)*$/, "expected a JSON Pointer such as /action/args/password");

export const redactionRulesSchema = z
  .object({
    /** Actions with one of these `data_classification`s have `/action/args` erased. */
    eraseClassifications: z.array(z.string()).default(["secret"]),
    /** JSON Pointers removed from the input (array elements become null, so other indexes hold). */
    erase: z.array(jsonPointerSchema).default([]),
    /** JSON Pointers whose values become the string "[masked]". */
    mask: z.array(jsonPointerSchema).default([]),
    /** Run the secret detectors over every string and secret-named key (default true). */
    detectSecrets: z.boolean().default(true),
  })
  .strict();

/** Redaction rules as configured; every field is optional. */
export type RedactionRules = z.input<typeof redactionRulesSchema>;
export type ResolvedRedactionRules = z.output<typeof redactionRulesSchema>;

export interface Redacted {
  input: unknown;
  /** JSON Pointers of parts removed entirely. */
  erased: string[];
  /** JSON Pointers of values replaced (entirely, or the secrets inside a string) by "[masked]". */
  masked: string[];
}

/** Rules `resolveRedactionRules` returned: checked, complete and frozen. */
const resolvedRules = new WeakSet<object>();

/**
 * Validates configured rules (they come from the gateway config) and fills in the defaults. The
 * result is frozen, and `redact` uses it as it is, without checking it again.
 */
export function resolveRedactionRules(rules: RedactionRules = {}): ResolvedRedactionRules {
  if (isResolved(rules)) return rules;
  const parsed = redactionRulesSchema.safeParse(rules);
  if (!parsed.success) {
    throw new WritError("invalid_argument", "the redaction rules are invalid", {
      fieldErrors: fieldErrorsFromZod(parsed.error, "/redaction"),
      suggestedFix:
        "use eraseClassifications (strings), erase and mask (JSON Pointers like /action/args/password) and detectSecrets (boolean)",
    });
  }
  const resolved = parsed.data;
  Object.freeze(resolved.eraseClassifications);
  Object.freeze(resolved.erase);
  Object.freeze(resolved.mask);
  resolvedRules.add(Object.freeze(resolved));
  return resolved;
}

function isResolved(rules: RedactionRules | ResolvedRedactionRules): rules is ResolvedRedactionRules {
  return resolvedRules.has(rules);
}

/**
 * A redacted copy of `input`; the caller's value is never changed. Rules from
 * `resolveRedactionRules` are used as they are; any others are resolved first.
 */
export function redact(input: unknown, rules: RedactionRules | ResolvedRedactionRules = {}): Redacted {
  const resolved = resolveRedactionRules(rules);
  // Work on a JSON copy: it is what gets stored, and it cannot alias the caller's objects. The
  // root sits in a one-key holder so that a pointer to the whole document ("") can be written too.
  const holder: Record<string, unknown> = { [ROOT]: jsonCopy(input) };
  const erased = new Set<string>();
  const masked = new Set<string>();

  const root = holder[ROOT];
  const action = isRecord(root) ? root.action : undefined;
  if (isRecord(action) && Object.hasOwn(action, "args")) {
    const classification = action.data_classification;
    if (typeof classification === "string" && resolved.eraseClassifications.includes(classification)) {
      delete action.args;
      erased.add("/action/args");
    }
  }
  for (const pointer of resolved.erase) {
    const slot = locate(holder, pointer);
    if (slot === undefined) continue;
    if (Array.isArray(slot.parent)) slot.parent[Number(slot.key)] = null;
    else delete slot.parent[slot.key];
    erased.add(pointer);
  }
  for (const pointer of resolved.mask) {
    const slot = locate(holder, pointer);
    if (slot === undefined) continue;
    setSlot(slot, MASK);
    masked.add(pointer);
  }
  if (resolved.detectSecrets) {
    const scrubbed = scan(holder[ROOT], [], masked);
    if (scrubbed !== undefined) holder[ROOT] = scrubbed;
  }
  return { input: holder[ROOT], erased: [...erased], masked: [...masked] };
}

// ---------------------------------------------------------------------------------- helpers

const ROOT = "root";

/** A place a value lives: an object property or an array element. */
interface Slot {
  parent: Record<string, unknown> | unknown[];
  key: string;
}

/**
 * What `JSON.parse(JSON.stringify(value))` gives, built without the text for plain data (objects
 * with Object's prototype or none, arrays, strings, finite numbers, booleans, null). Anything else
 * (a Date or another `toJSON`, a class instance, a BigInt, a cycle, a getter that throws, data
 * nested deeper than `MAX_DEPTH`) takes the text round trip, with its exact result or error.
 */
function jsonCopy(value: unknown): unknown {
  try {
    const copy = plainCopy(value, 0);
    if (copy !== NOT_PLAIN) return copy === OMITTED ? undefined : copy;
  } catch {
    // A getter threw: the round trip says so as JSON.stringify does.
  }
  return jsonRoundTrip(value);
}

function jsonRoundTrip(value: unknown): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new WritError("invalid_argument", `the policy input is not JSON: ${String(error)}`, {
      suggestedFix: "log plain JSON data (no cycles, no BigInt)",
      cause: error,
    });
  }
  return text === undefined ? undefined : JSON.parse(text);
}

/** Beyond this depth (or in a cycle, which never ends) the copy is the text round trip's. */
const MAX_DEPTH = 200;
/** `plainCopy`'s answer for a value it does not copy. */
const NOT_PLAIN = Symbol("not plain");
/** `plainCopy`'s answer for a value JSON leaves out (undefined, a function, a symbol). */
const OMITTED = Symbol("omitted");

function plainCopy(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      // JSON writes NaN and the infinities as null, and -0 as 0.
      return Number.isFinite(value) ? (value === 0 ? 0 : value) : null;
    case "undefined":
    case "function":
    case "symbol":
      return OMITTED;
    case "bigint":
      return NOT_PLAIN;
  }
  if (value === null) return null;
  if (depth > MAX_DEPTH || typeof value !== "object" || hasToJson(value)) return NOT_PLAIN;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = plainCopy(value[i], depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      out[i] = item === OMITTED ? null : item;
    }
    return out;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return NOT_PLAIN;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = plainCopy(Reflect.get(value, key), depth + 1);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    if (item === OMITTED) continue;
    if (key === "__proto__") setOwn(out, key, item);
    else out[key] = item;
  }
  return out;
}

function hasToJson(value: object): boolean {
  return "toJSON" in value && typeof Reflect.get(value, "toJSON") === "function";
}

/** Sets an own property; defineProperty, not assignment: a "__proto__" key is an own property too. */
function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

function getSlot(slot: Slot): unknown {
  return Array.isArray(slot.parent) ? slot.parent[Number(slot.key)] : slot.parent[slot.key];
}

function setSlot(slot: Slot, value: unknown): void {
  if (Array.isArray(slot.parent)) slot.parent[Number(slot.key)] = value;
  else setOwn(slot.parent, slot.key, value);
}

/** The slot a pointer names, when a value is there. */
function locate(holder: Record<string, unknown>, pointer: string): Slot | undefined {
  const tokens = pointer === "" ? [] : pointer.slice(1).split("/").map(unescapeToken);
  let slot: Slot = { parent: holder, key: ROOT };
  for (const token of tokens) {
    const value = getSlot(slot);
    if (Array.isArray(value)) {
      if (!/^(?:0|[1-9][0-9]*)$/.test(token) || Number(token) >= value.length) return undefined;
    } else if (!isRecord(value) || !Object.hasOwn(value, token)) {
      return undefined;
    }
    slot = { parent: value, key: token };
  }
  return slot;
}

/**
 * Masks secret-named keys and detected secrets in `value` (at `path`), recording their pointers
 * (built only for what is masked). A string is not changed in place: its scrubbed text is
 * returned, for the caller to put where it was; undefined when nothing is to change there.
 */
function scan(value: unknown, path: (string | number)[], masked: Set<string>): string | undefined {
  if (typeof value === "string") {
    if (value === MASK) return undefined;
    const scrubbed = scrubString(value);
    if (scrubbed === value) return undefined;
    masked.add(formatPointer(path));
    return scrubbed;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      const scrubbed = scan(value[i], path, masked);
      if (scrubbed !== undefined) value[i] = scrubbed;
      path.pop();
    }
  } else if (isRecord(value)) {
    for (const name of Object.keys(value)) {
      path.push(name);
      const child = value[name];
      if (isSensitiveKey(name) && hidesSecret(child)) {
        setOwn(value, name, MASK);
        masked.add(formatPointer(path));
      } else {
        const scrubbed = scan(child, path, masked);
        if (scrubbed !== undefined) setOwn(value, name, scrubbed);
      }
      path.pop();
    }
  }
  return undefined;
}

/** Values a secret-named key could hold a secret in: strings, objects and arrays (not counts or flags). */
function hidesSecret(value: unknown): boolean {
  if (typeof value === "string") return value !== "" && value !== MASK;
  if (Array.isArray(value)) return value.length > 0;
  return isRecord(value) && Object.keys(value).length > 0;
}

/**
 * Redaction of the policy input before it is logged (DESIGN section 8). Three kinds of rules, in
 * this order: the action's data classification erases its arguments; configured JSON Pointers are
 * erased or masked; secret detectors mask credentials anywhere in the input. The pointers of what
 * was erased or masked are returned so the log says what it does not show.
 */

import { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import { isRecord } from "../core/json.ts";
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

/** Validates configured rules (they come from the gateway config) and fills in the defaults. */
export function resolveRedactionRules(rules: RedactionRules = {}): ResolvedRedactionRules {
  const parsed = redactionRulesSchema.safeParse(rules);
  if (!parsed.success) {
    throw new WritError("invalid_argument", "the redaction rules are invalid", {
      fieldErrors: fieldErrorsFromZod(parsed.error, "/redaction"),
      suggestedFix:
        "use eraseClassifications (strings), erase and mask (JSON Pointers like /action/args/password) and detectSecrets (boolean)",
    });
  }
  return parsed.data;
}

/** A redacted copy of `input`; the caller's value is never changed. */
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
  if (resolved.detectSecrets) scan({ parent: holder, key: ROOT }, "", masked);
  return { input: holder[ROOT], erased: [...erased], masked: [...masked] };
}

// ---------------------------------------------------------------------------------- helpers

const ROOT = "root";

/** A place a value lives: an object property or an array element. */
interface Slot {
  parent: Record<string, unknown> | unknown[];
  key: string;
}

function jsonCopy(value: unknown): unknown {
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

function escapeToken(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

function getSlot(slot: Slot): unknown {
  return Array.isArray(slot.parent) ? slot.parent[Number(slot.key)] : slot.parent[slot.key];
}

function setSlot(slot: Slot, value: unknown): void {
  if (Array.isArray(slot.parent)) slot.parent[Number(slot.key)] = value;
  // defineProperty, not assignment: a parsed "__proto__" key is an own property to overwrite.
  else
    Object.defineProperty(slot.parent, slot.key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
}

/** The slot a pointer names, when a value is there. */
function locate(holder: Record<string, unknown>, pointer: string): Slot | undefined {
  const tokens =
    pointer === ""
      ? []
      : pointer
          .slice(1)
          .split("/")
          .map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
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

/** Masks secret-named keys and detected secrets at and under `slot`, recording their pointers. */
function scan(slot: Slot, pointer: string, masked: Set<string>): void {
  const value = getSlot(slot);
  if (typeof value === "string") {
    if (value === MASK) return;
    const scrubbed = scrubString(value);
    if (scrubbed !== value) {
      setSlot(slot, scrubbed);
      masked.add(pointer);
    }
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) scan({ parent: value, key: String(i) }, `${pointer}/${i}`, masked);
  } else if (isRecord(value)) {
    for (const name of Object.keys(value)) {
      const childPointer = `${pointer}/${escapeToken(name)}`;
      if (isSensitiveKey(name) && hidesSecret(value[name])) {
        setSlot({ parent: value, key: name }, MASK);
        masked.add(childPointer);
      } else {
        scan({ parent: value, key: name }, childPointer, masked);
      }
    }
  }
}

/** Values a secret-named key could hold a secret in: strings, objects and arrays (not counts or flags). */
function hidesSecret(value: unknown): boolean {
  if (typeof value === "string") return value !== "" && value !== MASK;
  if (Array.isArray(value)) return value.length > 0;
  return isRecord(value) && Object.keys(value).length > 0;
}

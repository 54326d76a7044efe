/**
 * The redaction of the decision log against the implementation it replaced (kept below as the
 * oracle, with the detectors it used): for random JSON-ish inputs full of secret-looking strings
 * and keys, and random rules, the redacted input, the erased and masked pointers (and their order)
 * and the errors are the same.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../../src/core/errors.ts";
import { isRecord } from "../../src/core/json.ts";
import { redact, resolveRedactionRules } from "../../src/decisionlog/redact.ts";

// Fake credentials, assembled at run time so that secret scanners do not flag this file.
const secrets = [
  ["AKIA", "IOSFODNN7EXAMPLE"].join(""),
  ["ASIA", "IOSFODNN7EXAMPL"].join(""),
  `aws_secret_access_key = ${["wJalrXUtnFEMI/K7MDENG", "/bPxRfiCYEXAMPLEKEY"].join("")}`,
  `SecretAccessKey: "${["wJalrXUtnFEMI/K7MDENG", "/bPxRfiCYEXAMPLEKEY"].join("")}"`,
  ["ghp", "_", "a1B2".repeat(9)].join(""),
  ["github", "_pat_", "11ABCDEFG0", "_abcdefghijklmnopqrstuvwxyz0123456789"].join(""),
  ["xo", "xb-", "1234567890-abcdefghij"].join(""),
  ["xo", "xb-", "short"].join(""),
  ["sk", "-proj-", "abcdefghijklmnopqrstuvwxyz123456"].join(""),
  ["sk", "-", "tooshort"].join(""),
  ["eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiJhbGljZSJ9", "c2lnbmF0dXJlLWJ5dGVz"].join("."),
  "eyJ",
  ["-----BEGIN RSA PRIVATE", " KEY-----\nMIIEowIBAAKCAQEAx\n-----END RSA PRIVATE KEY-----"].join(""),
  ["-----BEGIN ", "PRIVATE KEY-----\nunterminated"].join(""),
  "-----BEGIN CERTIFICATE-----",
  "Authorization: Bearer abcdef0123456789.xyz==",
  "bearer   zzzzzzzzzzzzzzzzzz",
  "BEARER x",
  "[masked]",
  "",
];
const keys = [
  "password",
  "X-Api-Key",
  "db_password_confirmation",
  "token",
  "tokens",
  "Authorization",
  "cookie",
  "privateKey",
  "cmd",
  "args",
  "action",
  "a/b",
  "~x",
  "~1",
  "__proto__",
  "0",
  "10",
  "constructor",
  "toString",
  "ü",
];

const secretish = fc.oneof(
  fc.constantFrom(...secrets),
  fc
    .tuple(fc.string({ maxLength: 8 }), fc.constantFrom(...secrets), fc.string({ maxLength: 8 }))
    .map(([a, b, c]) => a + b + c),
  fc.string({ maxLength: 12 }),
);
const key = fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 6 }));
const leaf = fc.oneof(
  secretish,
  fc.integer(),
  fc.double(),
  fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, true, false, null, undefined),
  fc.constant(() => 1),
  fc.date({ noInvalidDate: true }),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small" }, leaf, tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 4 }),
  object: fc.array(fc.tuple(key, tie("value")), { maxLength: 5 }).map((entries) => {
    const object: Record<string, unknown> = {};
    for (const [k, v] of entries)
      Object.defineProperty(object, k, { value: v, writable: true, enumerable: true, configurable: true });
    return object;
  }),
}));
/** Inputs shaped like policy inputs some of the time, so that the classification rule applies. */
const input = fc.oneof(
  value,
  fc
    .tuple(value, fc.constantFrom("secret", "internal", "pii"), fc.boolean())
    .map(([args, data_classification, withArgs]) => ({
      subject: { id: "alice" },
      action: withArgs
        ? { name: "shell", data_classification, args }
        : { name: "shell", data_classification },
    })),
);

/** The JSON Pointers of every value in `v` (and some that name nothing). */
function pointers(v: unknown, at = ""): string[] {
  const out = [at];
  if (Array.isArray(v)) for (const [i, item] of v.entries()) out.push(...pointers(item, `${at}/${i}`));
  else if (isRecord(v))
    for (const k of Object.keys(v))
      out.push(...pointers(v[k], `${at}/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`));
  return out;
}

const rules = (v: unknown) => {
  const known = [...pointers(v), "/nothing", "/action/args", "/0/9", "/a~1b"];
  return fc.record(
    {
      eraseClassifications: fc.subarray(["secret", "pii", "internal"]),
      erase: fc.subarray(known, { maxLength: 3 }),
      mask: fc.subarray(known, { maxLength: 3 }),
      detectSecrets: fc.boolean(),
    },
    { requiredKeys: [] },
  );
};

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
function outcome(run: () => unknown): Outcome {
  try {
    return { ok: true, value: run() };
  } catch (error) {
    return { ok: false, error: error instanceof WritError ? error.toJSON() : String(error) };
  }
}

function expectSame(subject: unknown, ruleSet: Parameters<typeof redact>[1]) {
  const want = outcome(() => oldRedact(subject, ruleSet));
  const got = outcome(() => redact(subject, ruleSet));
  expect(difference(got, want)).toBeUndefined();
}

/**
 * Where `a` and `b` differ (undefined when they do not): prototypes, own keys in order, and
 * leaves with Object.is (so -0 is not 0). Own "constructor" keys make `toStrictEqual` unusable.
 */
function difference(a: unknown, b: unknown, at = ""): string | undefined {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null)
    return Object.is(a, b) ? undefined : `${at}: ${String(a)} vs ${String(b)}`;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return `${at}: prototypes differ`;
  const keysA = Reflect.ownKeys(a);
  const keysB = Reflect.ownKeys(b);
  if (JSON.stringify(keysA.map(String)) !== JSON.stringify(keysB.map(String)))
    return `${at}: keys ${keysA.map(String)} vs ${keysB.map(String)}`;
  for (const k of keysA) {
    const found = difference(Reflect.get(a, k), Reflect.get(b, k), `${at}/${String(k)}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

describe("redact against the implementation it replaced", () => {
  it("gives the same redacted input, erased and masked pointers, for random inputs and rules", () => {
    fc.assert(
      fc.property(
        input.chain((v) => fc.tuple(fc.constant(v), rules(v))),
        ([subject, ruleSet]) => {
          expectSame(subject, ruleSet);
          expectSame(subject, resolveRedactionRules(ruleSet));
        },
      ),
      { numRuns: 1500 },
    );
  });

  it("fails the same way on what is not JSON, and copies a class instance and toJSON as JSON does", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { back: cyclic };
    class Point {
      constructor(
        readonly x: number,
        readonly token: string,
      ) {}
    }
    const withGetter = {
      get password() {
        return "hunter2";
      },
    };
    const throwing = {
      get boom(): string {
        throw new Error("no");
      },
    };
    const deep: unknown[] = [];
    let cursor = deep;
    for (let i = 0; i < 500; i++) {
      const next: unknown[] = [`sk-${"a".repeat(24)}`];
      cursor.push(next);
      cursor = next;
    }
    for (const odd of [
      cyclic,
      { n: 1n },
      new Point(1, "s3cret-value"),
      { at: new Date(0), nested: { toJSON: () => ({ password: "x" }) } },
      withGetter,
      throwing,
      Object.assign(Object.create(null), { token: "abc" }),
      [undefined, () => 1, Symbol("s")],
      undefined,
      () => 1,
      new String("Bearer abcdefghijkl"),
      deep,
    ]) {
      expectSame(odd, {});
      expectSame(odd, { mask: ["/0"], erase: ["/n"] });
    }
  });

  it("refuses invalid rules as before, and uses resolved rules as they are", () => {
    expectSame({ a: 1 }, { erase: ["no-slash"] });
    const resolved = resolveRedactionRules({ mask: ["/a"] });
    expect(Object.isFrozen(resolved) && Object.isFrozen(resolved.mask)).toBe(true);
    expect(resolveRedactionRules(resolved)).toBe(resolved);
    expect(redact({ a: 1, b: 2 }, resolved)).toEqual({
      input: { a: "[masked]", b: 2 },
      erased: [],
      masked: ["/a"],
    });
  });
});

// ------------------------------------------------------------ the oracle: the implementation replaced

const MASK = "[masked]";

interface Detector {
  name: string;
  pattern: RegExp;
  replacement: string;
}

/** Applied in this order: the wide ones (PEM blocks, JWTs) first so that nothing inside them is half-masked. */
const detectors: readonly Detector[] = [
  {
    name: "pem_private_key",
    pattern:
      /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
    replacement: MASK,
  },
  { name: "jwt", pattern: /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, replacement: MASK },
  { name: "bearer", pattern: /\b(Bearer)\s+[A-Za-z0-9\-._~+/]{8,}=*/gi, replacement: `$1 ${MASK}` },
  { name: "aws_access_key_id", pattern: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, replacement: MASK },
  {
    name: "aws_secret_access_key",
    pattern: /((?:aws_?)?secret_?access_?key["']?\s*[:=]\s*["']?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])/gi,
    replacement: `$1${MASK}`,
  },
  {
    name: "github_token",
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g,
    replacement: MASK,
  },
  { name: "slack_token", pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, replacement: MASK },
  { name: "openai_key", pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}/g, replacement: MASK },
];

/** The string with every detected secret replaced by the mask (the same string when none was found). */
function scrubString(text: string): string {
  let out = text;
  for (const detector of detectors) out = out.replace(detector.pattern, detector.replacement);
  return out;
}

const sensitiveKeyParts = [
  "password",
  "passwd",
  "passphrase",
  "secret",
  "token",
  "apikey",
  "authorization",
  "cookie",
  "privatekey",
];

/**
 * Whether an object key names a secret: case-insensitive, ignoring `-`, `_`, `.` and spaces, and
 * matching anywhere in the key (`X-Api-Key`, `db_password_confirmation`, `aws_secret_access_key`).
 */
function isSensitiveKey(key: string): boolean {
  const normalized = key.toLowerCase().replace(/[-_. ]/g, "");
  return sensitiveKeyParts.some((part) => normalized.includes(part));
}

const jsonPointerSchema = z
  .string()
  .regex(/^(?:\/(?:[^~/]|~[01])*)*$/, "expected a JSON Pointer such as /action/args/password");

const redactionRulesSchema = z
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
type RedactionRules = z.input<typeof redactionRulesSchema>;
type ResolvedRedactionRules = z.output<typeof redactionRulesSchema>;

interface Redacted {
  input: unknown;
  /** JSON Pointers of parts removed entirely. */
  erased: string[];
  /** JSON Pointers of values replaced (entirely, or the secrets inside a string) by "[masked]". */
  masked: string[];
}

/** Validates configured rules (they come from the gateway config) and fills in the defaults. */
function oldResolveRedactionRules(rules: RedactionRules = {}): ResolvedRedactionRules {
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
function oldRedact(input: unknown, rules: RedactionRules | ResolvedRedactionRules = {}): Redacted {
  const resolved = oldResolveRedactionRules(rules);
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

/**
 * Random values and UUIDs: `rand.intn` (OPA's `v1/topdown/numbers.go`), `uuid.rfc4122` and
 * `uuid.parse` (`v1/topdown/uuid.go`, `internal/uuid`, google/uuid's parser). Random results
 * are memoized per evaluation, so the same arguments give the same value within one query.
 */
import { randomBytes } from "node:crypto";
import {
  asPlainInt,
  canonicalKey,
  makeObject,
  makeString,
  type NumberValue,
  numberFromBigInt,
  type Value,
} from "../../plan/value.ts";
import { arg, BuiltinError, define, int, numberArg, str, stringArg } from "../registry.ts";

// ------------------------------------------------------------------------------------ rand.intn

/** A uniformly random integer in [0, n) (n > 0), by rejection sampling. */
function randomBelow(n: bigint): bigint {
  const bits = n.toString(2).length;
  const bytes = Math.ceil(bits / 8);
  const mask = (1n << BigInt(bits)) - 1n;
  for (;;) {
    const x = BigInt(`0x${randomBytes(bytes).toString("hex")}`) & mask;
    if (x < n) return x;
  }
}

/** OPA's `IntOperand` (a plain integer that fits Go's `int`), kept exact. */
function goIntArg(args: readonly Value[], i: number): bigint {
  const n = asPlainInt(numberArg(args, i));
  if (n === undefined)
    throw new BuiltinError(
      "eval_type_error",
      `operand ${i + 1} must be integer number but got floating-point number`,
    );
  return n;
}

define("rand.intn", (args, ctx) => {
  const s = stringArg(args, 0);
  let n = goIntArg(args, 1);
  if (n === 0n) return int(0);
  if (n < 0n) n = -n;
  const bound = n;
  return ctx.memo(`rand.intn:${s}-${bound}`, (): NumberValue => numberFromBigInt(randomBelow(bound)));
});

// ------------------------------------------------------------------------------------ uuid

/** A random version 4 UUID (`internal/uuid.New`). */
function newUUID(): string {
  const b = randomBytes(16);
  b[8] = (b[8]! & 0x3f) | 0x80;
  b[6] = (b[6]! & 0x0f) | 0x40;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

define("uuid.rfc4122", (args, ctx) => {
  const key = arg(args, 0);
  return ctx.memo(`uuid.rfc4122:${canonicalKey(key)}`, () => makeString(newUUID()));
});

function hexByte(s: string, i: number): number | undefined {
  const pair = s.slice(i, i + 2);
  return /^[0-9a-fA-F]{2}$/.test(pair) ? Number.parseInt(pair, 16) : undefined;
}

const HYPHENATED_OFFSETS = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/** google/uuid's `Parse`: hyphenated, `urn:uuid:`, braced or 32 hex digits. */
function parseUUID(input: string): Uint8Array | undefined {
  // google/uuid works on bytes.
  const bytes = new TextEncoder().encode(input);
  if (bytes.length > 36 + 9) return undefined;
  let s = String.fromCharCode(...bytes);
  const out = new Uint8Array(16);
  switch (s.length) {
    case 36:
      break;
    case 36 + 9:
      if (s.slice(0, 9).toLowerCase() !== "urn:uuid:") return undefined;
      s = s.slice(9);
      break;
    case 36 + 2:
      s = s.slice(1);
      break;
    case 32:
      for (let i = 0; i < 16; i++) {
        const v = hexByte(s, i * 2);
        if (v === undefined) return undefined;
        out[i] = v;
      }
      return out;
    default:
      return undefined;
  }
  if (s[8] !== "-" || s[13] !== "-" || s[18] !== "-" || s[23] !== "-") return undefined;
  for (const [i, x] of HYPHENATED_OFFSETS.entries()) {
    const v = hexByte(s, x);
    if (v === undefined) return undefined;
    out[i] = v;
  }
  return out;
}

function variantName(b8: number): string {
  if ((b8 & 0xc0) === 0x80) return "RFC4122";
  if ((b8 & 0xe0) === 0xc0) return "Microsoft";
  if ((b8 & 0xe0) === 0xe0) return "Future";
  return "Reserved";
}

function macVariables(b: number): string {
  if ((b & 0b11) === 0b11) return "local:multicast";
  if ((b & 0b01) === 0b01) return "global:multicast";
  if ((b & 0b10) === 0b10) return "local:unicast";
  return "global:unicast";
}

/** 100-ns intervals between 1582-10-15 and 1970-01-01 (google/uuid's `g1582ns100`). */
const G1582_NS100 = 122192928000000000n;

function uuidFields(u: Uint8Array): Value {
  const version = u[6]! >> 4;
  const fields: [string, Value][] = [
    ["version", int(version)],
    ["variant", str(variantName(u[8]!))],
  ];
  if (version === 1 || version === 2) {
    const be = (from: number, to: number) =>
      u.subarray(from, to).reduce((acc, b) => (acc << 8n) | BigInt(b), 0n);
    const t = be(0, 4) | (be(4, 6) << 32n) | ((be(6, 8) & 0xfffn) << 48n);
    // Time.UnixTime with Go's truncating division, then int64 arithmetic.
    const units = t - G1582_NS100;
    const ns = BigInt.asIntN(64, (units / 10_000_000n) * 1_000_000_000n + (units % 10_000_000n) * 100n);
    const node = [...u.subarray(10, 16)].map((b) => b.toString(16).padStart(2, "0")).join("-");
    fields.push(
      ["time", numberFromBigInt(ns)],
      ["nodeid", str(node)],
      ["macvariables", str(macVariables(u[10]!))],
      ["clocksequence", int(Number(be(8, 10)) & 0x3fff)],
    );
    if (version === 2) {
      const domain = u[9]!;
      fields.push(
        ["id", numberFromBigInt(be(0, 4))],
        ["domain", str(["Person", "Group", "Org"][domain] ?? `Domain${domain}`)],
      );
    }
  }
  return makeObject(fields.map(([k, v]) => [str(k), v]));
}

define("uuid.parse", (args) => {
  const u = parseUUID(stringArg(args, 0));
  return u ? uuidFields(u) : undefined;
});

/**
 * `units.parse` and `units.parse_bytes`, following OPA's `v1/topdown/parse_units.go` and
 * `parse_bytes.go`: an amount in Go's `big.Rat` / `big.Float` decimal syntax followed by a
 * decimal (k, M, G, …) or binary (Ki, Mi, …) suffix. `units.parse` is exact (`big.Rat`, ten
 * decimal places for fractions); `units.parse_bytes` multiplies at `big.Float`'s 64-bit
 * precision and truncates to an integer.
 */
import {
  type BigFloat,
  bigFloatFromBigInt,
  bigFloatMul,
  bigFloatTrunc,
  isNumberText,
  type NumberValue,
  numberFromBigInt,
  numberFromText,
  toBigFloat,
  type Value,
} from "../../plan/value.ts";
import { define, fail, stringArg } from "../registry.ts";

const KI = 1n << 10n;
const MI = 1n << 20n;
const GI = 1n << 30n;
const TI = 1n << 40n;
const PI = 1n << 50n;
const EI = 1n << 60n;
const K = 1000n;
const M = K ** 2n;
const G = K ** 3n;
const T = K ** 4n;
const P = K ** 5n;
const E = K ** 6n;

/** OPA's `maxExponentDigits`. */
const MAX_EXPONENT_DIGITS = 6;

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= "0" && c <= "9";
}

/**
 * OPA's `extractNumAndUnit`: splits `10.5Ki` into `10.5` and `Ki`; undefined when an exponent
 * has more than six digits.
 */
function splitAmount(s: string): { num: string; unit: string } | undefined {
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (!isDigit(c) && c !== "." && c !== "e" && c !== "E" && c !== "+" && c !== "-")
      return { num: s.slice(0, i), unit: s.slice(i) };
    if (c === "e" || c === "E") {
      const next = s[i + 1];
      if (next === undefined || !(isDigit(next) || next === "+" || next === "-"))
        return { num: s.slice(0, i), unit: s.slice(i) };
      if (next === "+" || next === "-") i++;
      let end = i + 1;
      while (isDigit(s[end])) end++;
      if (end - (i + 1) > MAX_EXPONENT_DIGITS) return undefined;
    }
  }
  return { num: s, unit: "" };
}

/** An exact decimal `coef × 10^exp` from Go's float syntax (`1.5`, `.5`, `5.`, `+2e-3`). */
function parseDecimal(text: string): { coef: bigint; exp: number } | undefined {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return undefined;
  const intPart = m[2] ?? "";
  const frac = m[3] ?? "";
  if (intPart === "" && frac === "") return undefined;
  const magnitude = BigInt(intPart + frac);
  return { coef: m[1] === "-" ? -magnitude : magnitude, exp: Number(m[4] ?? "0") - frac.length };
}

/** Go's `big.Rat.FloatString(10)` of `coef / 10^k` (k > 0): rounded half away from zero. */
function floatString10(coef: bigint, k: number): string {
  const neg = coef < 0n;
  const abs = neg ? -coef : coef;
  let q: bigint;
  let r: bigint;
  if (k <= 10) {
    const den = 10n ** BigInt(k);
    q = abs / den;
    r = (abs % den) * 10n ** BigInt(10 - k);
  } else if (abs.toString().length + 1 < k - 10) {
    // Far below 10^-10: rounds to zero.
    q = 0n;
    r = 0n;
  } else {
    const den = 10n ** BigInt(k);
    q = abs / den;
    const scaled = (abs % den) * 10n ** 10n;
    r = scaled / den;
    if (2n * (scaled % den) >= den) r++;
    if (r >= 10n ** 10n) {
      q++;
      r -= 10n ** 10n;
    }
  }
  return `${neg ? "-" : ""}${q}.${r.toString().padStart(10, "0")}`;
}

/** The multiplier of a `units.parse` suffix, as a decimal `coef × 10^exp`. */
function unitMultiplier(unit: string): { coef: bigint; exp: number } | undefined {
  switch (unit) {
    case "m":
      return { coef: 1n, exp: -3 };
    case "":
      return { coef: 1n, exp: 0 };
    case "k":
    case "K":
      return { coef: K, exp: 0 };
    case "ki":
    case "Ki":
      return { coef: KI, exp: 0 };
    case "M":
      return { coef: M, exp: 0 };
    case "mi":
    case "Mi":
      return { coef: MI, exp: 0 };
    case "g":
    case "G":
      return { coef: G, exp: 0 };
    case "gi":
    case "Gi":
      return { coef: GI, exp: 0 };
    case "t":
    case "T":
      return { coef: T, exp: 0 };
    case "ti":
    case "Ti":
      return { coef: TI, exp: 0 };
    case "p":
    case "P":
      return { coef: P, exp: 0 };
    case "pi":
    case "Pi":
      return { coef: PI, exp: 0 };
    case "e":
    case "E":
      return { coef: E, exp: 0 };
    case "ei":
    case "Ei":
      return { coef: EI, exp: 0 };
    default:
      return undefined;
  }
}

function parseUnits(args: readonly Value[]): NumberValue {
  // Quotes are removed for parity with units.parse_bytes; case is kept to tell m from M.
  const s = stringArg(args, 0).replaceAll('"', "");
  if (s.includes(" ")) fail("units.parse: spaces not allowed in resource strings");
  const split = splitAmount(s);
  if (!split) fail("units.parse: exponent too large");
  const { num } = split;
  if (num === "") fail("units.parse: no amount provided");
  // Only the letters after the first are lowercased.
  const unit = split.unit.length > 1 ? split.unit[0] + split.unit.slice(1).toLowerCase() : split.unit;
  const mult = unitMultiplier(unit);
  if (!mult) fail(`units.parse: unit ${unit} not recognized`);
  const amount = parseDecimal(num);
  if (!amount) fail("units.parse: could not parse amount to a number");
  let coef = amount.coef * mult.coef;
  let exp = amount.exp + mult.exp;
  if (coef === 0n) return numberFromBigInt(0n);
  while (exp < 0 && coef % 10n === 0n) {
    coef /= 10n;
    exp++;
  }
  // Integers print without decimals; other values with ten (big.Rat's FloatString(10)).
  if (exp >= 0) return numberFromText(exp === 0 ? coef.toString() : `${coef}${"0".repeat(exp)}`);
  return numberFromText(floatString10(coef, -exp));
}

const BYTE_UNITS: Record<string, bigint> = {
  "": 1n,
  kb: K,
  k: K,
  kib: KI,
  ki: KI,
  mb: M,
  m: M,
  mib: MI,
  mi: MI,
  gb: G,
  g: G,
  gib: GI,
  gi: GI,
  tb: T,
  t: T,
  tib: TI,
  ti: TI,
  pb: P,
  p: P,
  pib: PI,
  pi: PI,
  eb: E,
  e: E,
  eib: EI,
  ei: EI,
};

/** Decimal exponents beyond which `toBigFloat` does not expand the number. */
const MAX_DIRECT_EXPONENT = 100_000;

/** The amount at `big.Float.SetString`'s 64-bit precision. */
function amountFloat(num: string): BigFloat {
  const d = parseDecimal(num);
  if (d && Math.abs(d.exp) > MAX_DIRECT_EXPONENT) {
    const digits = (d.coef < 0n ? -d.coef : d.coef).toString().length;
    // Below one: the truncated product is zero whatever the unit (at most 2^60 < 10^19).
    if (d.coef === 0n || digits + d.exp < -20) return bigFloatFromBigInt(0n);
    if (d.exp > 0) return bigFloatFromBigInt(d.coef * 10n ** BigInt(d.exp));
  }
  try {
    return toBigFloat(numberFromText(num));
  } catch {
    // Only past MAX_DIRECT_EXPONENT with a mantissa of ~100,000 digits.
    return fail("units.parse_bytes: could not parse byte amount to a number");
  }
}

function parseBytes(args: readonly Value[]): NumberValue {
  const s = stringArg(args, 0).toLowerCase().replaceAll('"', "");
  if (s.includes(" ")) fail("units.parse_bytes: spaces not allowed in resource strings");
  const split = splitAmount(s);
  if (!split) fail("units.parse_bytes: exponent too large");
  const { num, unit } = split;
  if (num === "") fail("units.parse_bytes: no byte amount provided");
  const multiplier = Object.hasOwn(BYTE_UNITS, unit) ? BYTE_UNITS[unit] : undefined;
  if (multiplier === undefined) fail(`units.parse_bytes: byte unit ${unit} not recognized`);
  if (!isNumberText(num)) fail("units.parse_bytes: could not parse byte amount to a number");
  // big.Float product of the amount and the unit, truncated.
  return numberFromBigInt(bigFloatTrunc(bigFloatMul(amountFloat(num), bigFloatFromBigInt(multiplier))));
}

define("units.parse", parseUnits);
define("units.parse_bytes", parseBytes);

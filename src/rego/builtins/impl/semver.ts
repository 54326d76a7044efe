/**
 * `semver.is_valid` and `semver.compare` (`v1/topdown/semver.go`, `internal/semver`). Parsing is
 * SemVer 2.0.0 (a leading `v` accepted): major, minor and patch are int64 without leading zeros;
 * pre-release identifiers are non-empty, and numeric ones have no leading zeros; build metadata
 * identifiers are non-empty (leading zeros allowed); a `-` or `+` must be followed by identifiers.
 * OPA's conformance cases (`test-semver*-strict.yaml`) pin these rejections.
 */
import { compareStrings, FALSE, goQuote, TRUE } from "../../plan/value.ts";
import { arg, define, fail, int, stringArg } from "../registry.ts";

interface SemVer {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: string[];
}

const IDENTIFIER = /^[0-9A-Za-z-]+$/;
const NUMERIC = /^[0-9]+$/;

/** A version number: `0` or digits without a leading zero, within int64. */
function versionNumber(s: string): bigint | undefined {
  if (!NUMERIC.test(s) || (s.length > 1 && s[0] === "0")) return undefined;
  const n = BigInt(s);
  return n < 2n ** 63n ? n : undefined;
}

function identifiers(s: string, numericLeadingZero: boolean): string[] | undefined {
  const ids = s.split(".");
  for (const id of ids) {
    if (!IDENTIFIER.test(id)) return undefined;
    if (!numericLeadingZero && NUMERIC.test(id) && id.length > 1 && id[0] === "0") return undefined;
  }
  return ids;
}

function parseSemVer(version: string): SemVer | undefined {
  let rest = version.startsWith("v") ? version.slice(1) : version;
  const plus = rest.indexOf("+");
  if (plus >= 0) {
    if (!identifiers(rest.slice(plus + 1), true)) return undefined;
    rest = rest.slice(0, plus);
  }
  let pre: string[] = [];
  const dash = rest.indexOf("-");
  if (dash >= 0) {
    const ids = identifiers(rest.slice(dash + 1), false);
    if (!ids) return undefined;
    pre = ids;
    rest = rest.slice(0, dash);
  }
  const parts = rest.split(".");
  if (parts.length !== 3) return undefined;
  const [major, minor, patch] = parts.map(versionNumber);
  if (major === undefined || minor === undefined || patch === undefined) return undefined;
  return { major, minor, patch, pre };
}

function compareIdentifiers(a: string, b: string): number {
  const aNum = NUMERIC.test(a);
  const bNum = NUMERIC.test(b);
  if (aNum && !bNum) return -1;
  if (!aNum && bNum) return 1;
  if (aNum && bNum) {
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return Math.sign(compareStrings(a, b));
}

/** SemVer precedence: a version without pre-release is greater; identifiers compare left to right. */
function comparePreRelease(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return Math.sign(b.length - a.length);
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compareIdentifiers(a[i] ?? "", b[i] ?? "");
    if (c !== 0) return c;
  }
  return Math.sign(a.length - b.length);
}

function compareSemVer(a: SemVer, b: SemVer): number {
  for (const k of ["major", "minor", "patch"] as const) {
    if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  }
  return comparePreRelease(a.pre, b.pre);
}

define("semver.is_valid", (args) => {
  const v = arg(args, 0);
  return v.type === "string" && parseSemVer(v.value) ? TRUE : FALSE;
});

define("semver.compare", (args) => {
  const a = stringArg(args, 0);
  const b = stringArg(args, 1);
  const va = parseSemVer(a);
  if (!va) fail(`operand 1: string ${goQuote(a)} is not a valid SemVer`);
  const vb = parseSemVer(b);
  if (!vb) fail(`operand 2: string ${goQuote(b)} is not a valid SemVer`);
  return int(compareSemVer(va, vb));
});

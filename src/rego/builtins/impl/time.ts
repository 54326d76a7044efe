/**
 * The `time.*` builtins, following OPA's `v1/topdown/time.go`, which leans on Go's `time`
 * package: `time.Parse` and `Time.Format` with Go's reference layout
 * (`2006-01-02T15:04:05Z07:00`), `time.ParseDuration`, `Time.AddDate` and the calendar
 * accessors. Instants are exact nanosecond counts (bigint); OPA's range is that of an int64.
 *
 * Time zones come from the platform's IANA data through `Intl.DateTimeFormat` (OPA embeds Go's
 * tzdata): "" and "UTC" are UTC, "Local" is the process's zone, an unknown name is an error.
 * Zone abbreviations (layout `MST`) are the platform's short names where it has a letter
 * abbreviation, else Go-style numeric ones (`+0530`).
 */
import { makeArray, makeString, type NumberValue, numberFromBigInt, type Value } from "../../plan/value.ts";
import { arg, define, fail, int, intArg, str, stringArg, typeError } from "../registry.ts";

const NS_PER_SEC = 1_000_000_000n;
const MIN_NS = -(2n ** 63n);
const MAX_NS = 2n ** 63n - 1n;

const LONG_MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
const SHORT_MONTHS = LONG_MONTHS.map((m) => m.slice(0, 3));
const LONG_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const SHORT_DAYS = LONG_DAYS.map((d) => d.slice(0, 3));

// ------------------------------------------------------------------------------------ calendar

function floorDiv(a: number, b: number): number {
  return Math.floor(a / b);
}

function mod(a: number, b: number): number {
  return ((a % b) + b) % b;
}

function isLeap(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

function daysIn(month: number, year: number): number {
  if (month === 2) return isLeap(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (month 1–12). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = floorDiv(y, 400);
  const yoe = y - era * 400;
  const doy = floorDiv(153 * (month + (month > 2 ? -3 : 9)) + 2, 5) + day - 1;
  const doe = yoe * 365 + floorDiv(yoe, 4) - floorDiv(yoe, 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = floorDiv(z, 146097);
  const doe = z - era * 146097;
  const yoe = floorDiv(doe - floorDiv(doe, 1460) + floorDiv(doe, 36524) - floorDiv(doe, 146096), 365);
  const doy = doe - (365 * yoe + floorDiv(yoe, 4) - floorDiv(yoe, 100));
  const mp = floorDiv(5 * doy + 2, 153);
  const day = doy - floorDiv(153 * mp + 2, 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

// ------------------------------------------------------------------------------------ zones

interface Zone {
  /** The offset east of UTC in seconds in effect at a Unix second. */
  offset(unixSec: number): number;
  /** The zone's abbreviation at a Unix second (layout `MST`). */
  abbr(unixSec: number): string;
}

const UTC: Zone = { offset: () => 0, abbr: () => "UTC" };

/** Go's numeric abbreviation for a zone without a letter one (`+0530`, `-03`). */
function numericAbbr(offset: number): string {
  const sign = offset < 0 ? "-" : "+";
  const minutes = Math.floor(Math.abs(offset) / 60);
  const hh = String(Math.floor(minutes / 60)).padStart(2, "0");
  const mm = minutes % 60;
  return mm === 0 ? `${sign}${hh}` : `${sign}${hh}${String(mm).padStart(2, "0")}`;
}

const MAX_DATE_SEC = 8.64e12;

/**
 * Locales whose short zone names are tried in turn for a letter abbreviation like tzdata's
 * (en-US has PST and GMT, en-GB CET and BST, en-IN IST, en-AU AEST, …); measured against
 * tzdata, this chain names about nine in ten lettered zones as Go does.
 */
const ABBR_LOCALES = ["en-US", "en-GB", "en-IN", "en-AU", "en-ZA", "en-HK", "en-IE"];

function clampToDate(unixSec: number): Date {
  return new Date(Math.min(Math.max(unixSec, -MAX_DATE_SEC), MAX_DATE_SEC) * 1000);
}

function intlZone(name: string): Zone {
  const fields = new Intl.DateTimeFormat("en-US", {
    timeZone: name,
    hourCycle: "h23",
    era: "short",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  });
  let names: Intl.DateTimeFormat[] | undefined;
  const offset = (unixSec: number): number => {
    const date = clampToDate(unixSec);
    const parts: Record<string, string> = {};
    for (const p of fields.formatToParts(date)) parts[p.type] = p.value;
    const yearOfEra = Number(parts.year);
    const year = parts.era === "BC" || parts.era === "B" ? 1 - yearOfEra : yearOfEra;
    const local =
      daysFromCivil(year, Number(parts.month), Number(parts.day)) * 86400 +
      Number(parts.hour) * 3600 +
      Number(parts.minute) * 60 +
      Number(parts.second);
    return local - date.getTime() / 1000;
  };
  return {
    offset,
    abbr(unixSec) {
      names ??= ABBR_LOCALES.map(
        (l) => new Intl.DateTimeFormat(l, { timeZone: name, timeZoneName: "short" }),
      );
      const date = clampToDate(unixSec);
      for (const f of names) {
        const short = f.formatToParts(date).find((p) => p.type === "timeZoneName")?.value ?? "";
        if (/^[A-Za-z]+$/.test(short)) return short;
      }
      return numericAbbr(offset(unixSec));
    },
  };
}

const zones = new Map<string, Zone>();

/** Go's `time.LoadLocation` over the platform's IANA data. */
function loadZone(name: string): Zone {
  if (name === "" || name === "UTC") return UTC;
  const cached = zones.get(name);
  if (cached) return cached;
  let zone: Zone;
  if (name === "Local") {
    const local = new Intl.DateTimeFormat().resolvedOptions().timeZone;
    zone = local === "UTC" || local === "Etc/UTC" ? UTC : intlZone(local);
  } else {
    if (name.includes("..") || name[0] === "/" || name[0] === "\\") fail("time: invalid location name");
    // Intl also takes UTC offsets ("+05:00"), which are no zone names to Go.
    if (name[0] === "+" || name[0] === "-") fail(`unknown time zone ${name}`);
    let resolved: string;
    try {
      resolved = new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
    } catch {
      return fail(`unknown time zone ${name}`);
    }
    // Go's zone names are case-sensitive; Intl's are not.
    if (resolved !== name && resolved.toLowerCase() === name.toLowerCase()) fail(`unknown time zone ${name}`);
    zone = intlZone(name);
  }
  zones.set(name, zone);
  return zone;
}

// ------------------------------------------------------------------------------------ instants

interface Civil {
  year: number;
  month: number;
  day: number;
  yday: number;
  weekday: number;
  hour: number;
  minute: number;
  second: number;
  nsec: number;
  offset: number;
  abbr: () => string;
}

function unixSeconds(ns: bigint): { sec: number; nsec: number } {
  let sec = ns / NS_PER_SEC;
  let nsec = ns % NS_PER_SEC;
  if (nsec < 0n) {
    sec -= 1n;
    nsec += NS_PER_SEC;
  }
  return { sec: Number(sec), nsec: Number(nsec) };
}

/** The calendar fields of an instant in a zone (Go's `Date`, `Clock`, `Weekday`, `YearDay`). */
function civil(ns: bigint, zone: Zone): Civil {
  const { sec, nsec } = unixSeconds(ns);
  const offset = zone.offset(sec);
  const local = sec + offset;
  const days = floorDiv(local, 86400);
  const secOfDay = local - days * 86400;
  const { year, month, day } = civilFromDays(days);
  return {
    year,
    month,
    day,
    yday: days - daysFromCivil(year, 1, 1) + 1,
    weekday: mod(days + 4, 7),
    hour: Math.floor(secOfDay / 3600),
    minute: Math.floor(secOfDay / 60) % 60,
    second: secOfDay % 60,
    nsec,
    offset,
    abbr: () => zone.abbr(sec),
  };
}

/**
 * Go's `time.Date`: normalizes the month and day, then reads the wall clock in `zone` (at a
 * zone transition, Go's choice of offset). Returns Unix nanoseconds.
 */
function fromCivil(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  nsec: number,
  zone: Zone,
): bigint {
  const m0 = month - 1;
  const y = year + floorDiv(m0, 12);
  const m = mod(m0, 12) + 1;
  if (!Number.isSafeInteger(y) || Math.abs(y) > 1e9) fail("time outside of valid range");
  const days = BigInt(daysFromCivil(y, m, 1)) + BigInt(day) - 1n;
  const local = days * 86400n + BigInt(hour * 3600 + minute * 60 + second);
  let offset = 0;
  if (zone !== UTC && local > -9_000_000_000_000n && local < 9_000_000_000_000n) {
    const guess = zone.offset(Number(local));
    offset = guess === 0 ? 0 : zone.offset(Number(local) - guess);
  }
  return (local - BigInt(offset)) * NS_PER_SEC + BigInt(nsec);
}

/** OPA's `toSafeUnixNano`. */
function safeNanos(ns: bigint): NumberValue {
  if (ns < MIN_NS || ns > MAX_NS) fail("time outside of valid range");
  return numberFromBigInt(ns);
}

const EXPECTED_TIME = "either number (ns) or [number (ns), string (tz)]";

/** OPA's `tzTime`: a ns number, or `[ns]`, `[ns, tz]`, `[ns, tz, layout]`. */
function tzTime(v: Value): { ns: bigint; zone: Zone; layout: string } {
  let n: Value;
  let zone = UTC;
  let layout = "";
  if (v.type === "array") {
    const [first, tz, lay] = v.items;
    if (first === undefined) return typeError(1, v, EXPECTED_TIME);
    if (first.type !== "number") return typeError(1, first, "number");
    n = first;
    if (tz !== undefined) {
      if (tz.type !== "string") return typeError(1, tz, "string");
      zone = loadZone(tz.value);
    }
    if (lay !== undefined) {
      if (lay.type !== "string") return typeError(1, lay, "string");
      layout = lay.value;
    }
  } else if (v.type === "number") {
    n = v;
  } else {
    return typeError(1, v, EXPECTED_TIME);
  }
  if (n.int === undefined || n.int < MIN_NS || n.int > MAX_NS) fail("timestamp too big");
  return { ns: n.int, zone, layout };
}

// ------------------------------------------------------------------------------------ layouts

type StdKind =
  | "LongMonth"
  | "Month"
  | "NumMonth"
  | "ZeroMonth"
  | "LongWeekDay"
  | "WeekDay"
  | "Day"
  | "UnderDay"
  | "ZeroDay"
  | "UnderYearDay"
  | "ZeroYearDay"
  | "Hour"
  | "Hour12"
  | "ZeroHour12"
  | "Minute"
  | "ZeroMinute"
  | "Second"
  | "ZeroSecond"
  | "LongYear"
  | "Year"
  | "PM"
  | "pm"
  | "TZ"
  | "ISO8601TZ"
  | "ISO8601SecondsTZ"
  | "ISO8601ShortTZ"
  | "ISO8601ColonTZ"
  | "ISO8601ColonSecondsTZ"
  | "NumTZ"
  | "NumSecondsTz"
  | "NumShortTZ"
  | "NumColonTZ"
  | "NumColonSecondsTZ"
  | "FracSecond0"
  | "FracSecond9";

interface Std {
  kind: StdKind;
  /** Digits of a fractional second, and its separator (`.` or `,`). */
  digits?: number;
  sep?: string;
}

interface Chunk {
  prefix: string;
  std: Std | undefined;
  suffix: string;
}

const ZERO_X: StdKind[] = ["ZeroMonth", "ZeroDay", "ZeroHour12", "ZeroMinute", "ZeroSecond", "Year"];

function isDigitAt(s: string, i: number): boolean {
  const c = s[i];
  return c !== undefined && c >= "0" && c <= "9";
}

function startsWithLower(s: string): boolean {
  const c = s[0];
  return c !== undefined && c >= "a" && c <= "z";
}

/** Go's `nextStdChunk`: the text before the first layout element, the element, and the rest. */
function nextStdChunk(layout: string): Chunk {
  const at = (i: number, kind: StdKind, len: number): Chunk => ({
    prefix: layout.slice(0, i),
    std: { kind },
    suffix: layout.slice(i + len),
  });
  for (let i = 0; i < layout.length; i++) {
    const c = layout[i];
    const rest = layout.slice(i);
    switch (c) {
      case "J":
        if (rest.startsWith("Jan")) {
          if (rest.startsWith("January")) return at(i, "LongMonth", 7);
          if (!startsWithLower(rest.slice(3))) return at(i, "Month", 3);
        }
        break;
      case "M":
        if (rest.startsWith("Mon")) {
          if (rest.startsWith("Monday")) return at(i, "LongWeekDay", 6);
          if (!startsWithLower(rest.slice(3))) return at(i, "WeekDay", 3);
        }
        if (rest.startsWith("MST")) return at(i, "TZ", 3);
        break;
      case "0": {
        const n = layout[i + 1];
        if (n !== undefined && n >= "1" && n <= "6") return at(i, ZERO_X[n.charCodeAt(0) - 49]!, 2);
        if (rest.startsWith("002")) return at(i, "ZeroYearDay", 3);
        break;
      }
      case "1":
        if (layout[i + 1] === "5") return at(i, "Hour", 2);
        return at(i, "NumMonth", 1);
      case "2":
        if (rest.startsWith("2006")) return at(i, "LongYear", 4);
        return at(i, "Day", 1);
      case "_":
        if (layout[i + 1] === "2") {
          if (rest.startsWith("_2006")) return at(i + 1, "LongYear", 4);
          return at(i, "UnderDay", 2);
        }
        if (rest.startsWith("__2")) return at(i, "UnderYearDay", 3);
        break;
      case "3":
        return at(i, "Hour12", 1);
      case "4":
        return at(i, "Minute", 1);
      case "5":
        return at(i, "Second", 1);
      case "P":
        if (layout[i + 1] === "M") return at(i, "PM", 2);
        break;
      case "p":
        if (layout[i + 1] === "m") return at(i, "pm", 2);
        break;
      case "-":
        if (rest.startsWith("-070000")) return at(i, "NumSecondsTz", 7);
        if (rest.startsWith("-07:00:00")) return at(i, "NumColonSecondsTZ", 9);
        if (rest.startsWith("-0700")) return at(i, "NumTZ", 5);
        if (rest.startsWith("-07:00")) return at(i, "NumColonTZ", 6);
        if (rest.startsWith("-07")) return at(i, "NumShortTZ", 3);
        break;
      case "Z":
        if (rest.startsWith("Z070000")) return at(i, "ISO8601SecondsTZ", 7);
        if (rest.startsWith("Z07:00:00")) return at(i, "ISO8601ColonSecondsTZ", 9);
        if (rest.startsWith("Z0700")) return at(i, "ISO8601TZ", 5);
        if (rest.startsWith("Z07:00")) return at(i, "ISO8601ColonTZ", 6);
        if (rest.startsWith("Z07")) return at(i, "ISO8601ShortTZ", 3);
        break;
      case ".":
      case ",": {
        const ch = layout[i + 1];
        if (ch === "0" || ch === "9") {
          let j = i + 1;
          while (j < layout.length && layout[j] === ch) j++;
          if (!isDigitAt(layout, j)) {
            return {
              prefix: layout.slice(0, i),
              std: { kind: ch === "0" ? "FracSecond0" : "FracSecond9", digits: j - (i + 1), sep: c },
              suffix: layout.slice(j),
            };
          }
        }
        break;
      }
    }
  }
  return { prefix: layout, std: undefined, suffix: "" };
}

/** The layout names OPA accepts for Go's constants (`acceptedTimeFormats`). */
const LAYOUT_CONSTANTS: Record<string, string> = {
  ANSIC: "Mon Jan _2 15:04:05 2006",
  UnixDate: "Mon Jan _2 15:04:05 MST 2006",
  RubyDate: "Mon Jan 02 15:04:05 -0700 2006",
  RFC822: "02 Jan 06 15:04 MST",
  RFC822Z: "02 Jan 06 15:04 -0700",
  RFC850: "Monday, 02-Jan-06 15:04:05 MST",
  RFC1123: "Mon, 02 Jan 2006 15:04:05 MST",
  RFC1123Z: "Mon, 02 Jan 2006 15:04:05 -0700",
  RFC3339: "2006-01-02T15:04:05Z07:00",
  RFC3339Nano: "2006-01-02T15:04:05.999999999Z07:00",
};

function layoutOf(name: string): string {
  return Object.hasOwn(LAYOUT_CONSTANTS, name) ? LAYOUT_CONSTANTS[name]! : name;
}

// ------------------------------------------------------------------------------------ format

/** Go's `appendInt`: the sign, then at least `width` digits. */
function pad(x: number, width: number): string {
  const digits = String(Math.abs(x)).padStart(width, "0");
  return x < 0 ? `-${digits}` : digits;
}

const ISO_KINDS = new Set<StdKind>([
  "ISO8601TZ",
  "ISO8601ColonTZ",
  "ISO8601SecondsTZ",
  "ISO8601ShortTZ",
  "ISO8601ColonSecondsTZ",
]);

function formatNano(nsec: number, std: Std): string {
  const trim = std.kind === "FracSecond9";
  const n = std.digits ?? 0;
  if (trim && (n === 0 || nsec === 0)) return "";
  let out = `${std.sep}${pad(nsec, 9).slice(0, Math.min(n, 9))}`;
  if (trim) out = out.replace(/0+$/, "").replace(/[.,]$/, "");
  return out;
}

function formatOffset(kind: StdKind, offset: number): string {
  if (offset === 0 && ISO_KINDS.has(kind)) return "Z";
  let zone = Math.trunc(offset / 60);
  let abs = offset;
  let out = "+";
  if (zone < 0) {
    out = "-";
    zone = -zone;
    abs = -abs;
  }
  out += pad(Math.floor(zone / 60), 2);
  const colon = kind === "ISO8601ColonTZ" || kind === "NumColonTZ";
  const colonSeconds = kind === "ISO8601ColonSecondsTZ" || kind === "NumColonSecondsTZ";
  if (colon || colonSeconds) out += ":";
  if (kind !== "NumShortTZ" && kind !== "ISO8601ShortTZ") out += pad(zone % 60, 2);
  if (colonSeconds || kind === "ISO8601SecondsTZ" || kind === "NumSecondsTz") {
    if (colonSeconds) out += ":";
    out += pad(abs % 60, 2);
  }
  return out;
}

/** Go's `Time.Format`. */
function format(ns: bigint, zone: Zone, layout: string): string {
  const t = civil(ns, zone);
  let out = "";
  let rest = layout;
  while (rest !== "") {
    const { prefix, std, suffix } = nextStdChunk(rest);
    out += prefix;
    if (!std) break;
    rest = suffix;
    const hour12 = t.hour % 12 === 0 ? 12 : t.hour % 12;
    switch (std.kind) {
      case "Year":
        out += pad(Math.abs(t.year) % 100, 2);
        break;
      case "LongYear":
        out += pad(t.year, 4);
        break;
      case "Month":
        out += SHORT_MONTHS[t.month - 1];
        break;
      case "LongMonth":
        out += LONG_MONTHS[t.month - 1];
        break;
      case "NumMonth":
        out += String(t.month);
        break;
      case "ZeroMonth":
        out += pad(t.month, 2);
        break;
      case "WeekDay":
        out += SHORT_DAYS[t.weekday];
        break;
      case "LongWeekDay":
        out += LONG_DAYS[t.weekday];
        break;
      case "Day":
        out += String(t.day);
        break;
      case "UnderDay":
        out += (t.day < 10 ? " " : "") + String(t.day);
        break;
      case "ZeroDay":
        out += pad(t.day, 2);
        break;
      case "UnderYearDay":
        out += (t.yday < 100 ? (t.yday < 10 ? "  " : " ") : "") + String(t.yday);
        break;
      case "ZeroYearDay":
        out += pad(t.yday, 3);
        break;
      case "Hour":
        out += pad(t.hour, 2);
        break;
      case "Hour12":
        out += String(hour12);
        break;
      case "ZeroHour12":
        out += pad(hour12, 2);
        break;
      case "Minute":
        out += String(t.minute);
        break;
      case "ZeroMinute":
        out += pad(t.minute, 2);
        break;
      case "Second":
        out += String(t.second);
        break;
      case "ZeroSecond":
        out += pad(t.second, 2);
        break;
      case "PM":
        out += t.hour >= 12 ? "PM" : "AM";
        break;
      case "pm":
        out += t.hour >= 12 ? "pm" : "am";
        break;
      case "TZ":
        out += t.abbr();
        break;
      case "FracSecond0":
      case "FracSecond9":
        out += formatNano(t.nsec, std);
        break;
      default:
        out += formatOffset(std.kind, t.offset);
    }
  }
  return out;
}

// ------------------------------------------------------------------------------------ parse

/** Go's `time.quote`: non-ASCII and control bytes as `\xNN`. */
function timeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x80 || c < 0x20) {
      for (const b of new TextEncoder().encode(ch)) out += `\\x${b.toString(16).padStart(2, "0")}`;
    } else {
      out += ch === '"' || ch === "\\" ? `\\${ch}` : ch;
    }
  }
  return `${out}"`;
}

class Bad extends Error {}

/** Go's `getnum`: one or two digits (exactly two when `fixed`). */
function getnum(s: string, fixed: boolean): [number, string] {
  if (!isDigitAt(s, 0)) throw new Bad();
  if (!isDigitAt(s, 1)) {
    if (fixed) throw new Bad();
    return [Number(s[0]), s.slice(1)];
  }
  return [Number(s.slice(0, 2)), s.slice(2)];
}

function getnum3(s: string, fixed: boolean): [number, string] {
  let i = 0;
  while (i < 3 && isDigitAt(s, i)) i++;
  if (i === 0 || (fixed && i !== 3)) throw new Bad();
  return [Number(s.slice(0, i)), s.slice(i)];
}

/** Go's `atoi`: an optional sign and decimal digits, nothing else. */
function atoi(s: string): number {
  const m = /^([+-]?)(\d+)$/.exec(s);
  if (!m) throw new Bad();
  const n = Number(m[2]);
  return m[1] === "-" ? -n : n;
}

function lookupName(tab: readonly string[], val: string): [number, string] {
  for (let i = 0; i < tab.length; i++) {
    const v = tab[i]!;
    if (val.length >= v.length && val.slice(0, v.length).toLowerCase() === v.toLowerCase())
      return [i, val.slice(v.length)];
  }
  throw new Bad();
}

function cutspace(s: string): string {
  return s.replace(/^ +/, "");
}

/** Go's `skip`: consumes the literal `prefix` (a run of spaces matches any run of spaces). */
function skip(value: string, prefix: string): string {
  let v = value;
  let p = prefix;
  while (p.length > 0) {
    if (p[0] === " ") {
      if (v.length > 0 && v[0] !== " ") throw new Bad();
      p = cutspace(p);
      v = cutspace(v);
      continue;
    }
    if (v.length === 0 || v[0] !== p[0]) throw new Bad();
    p = p.slice(1);
    v = v.slice(1);
  }
  return v;
}

function commaOrPeriod(c: string | undefined): boolean {
  return c === "." || c === ",";
}

/** Go's `parseNanoseconds`: `value[0]` is the separator, then `nbytes - 1` digits. */
function parseNanoseconds(value: string, nbytes: number): { ns: number; range: string } {
  if (!commaOrPeriod(value[0])) throw new Bad();
  const n = Math.min(nbytes, 10);
  const ns = atoi(value.slice(1, n));
  if (ns < 0) return { ns: 0, range: "fractional second" };
  return { ns: ns * 10 ** (10 - n), range: "" };
}

/** Go's `leadingInt` on a string; undefined on overflow. */
function leadingInt(s: string): { x: bigint; rest: string } | undefined {
  let i = 0;
  let x = 0n;
  for (; i < s.length && isDigitAt(s, i); i++) {
    if (x > 2n ** 63n / 10n) return undefined;
    x = x * 10n + BigInt(s.charCodeAt(i) - 48);
    if (x > 2n ** 63n) return undefined;
  }
  return { x, rest: s.slice(i) };
}

function parseSignedOffset(value: string): number {
  const sign = value[0];
  if (sign !== "-" && sign !== "+") return 0;
  const r = leadingInt(value.slice(1));
  if (!r || r.rest === value.slice(1) || r.x > 24n) return 0;
  return value.length - r.rest.length;
}

/** Go's `parseTimeZone`: the length of a zone abbreviation at the start of `value`. */
function parseTimeZone(value: string): number | undefined {
  if (value.length < 3) return undefined;
  if (value.startsWith("ChST") || value.startsWith("MeST")) return 4;
  if (value.startsWith("GMT")) return value.length === 3 ? 3 : 3 + parseSignedOffset(value.slice(3));
  if (value[0] === "+" || value[0] === "-") {
    const n = parseSignedOffset(value);
    return n > 0 ? n : undefined;
  }
  let upper = 0;
  while (upper < 6 && upper < value.length && value[upper]! >= "A" && value[upper]! <= "Z") upper++;
  if (upper === 3) return 3;
  if (upper === 4 && (value[3] === "T" || value.startsWith("WITA"))) return 4;
  if (upper === 5 && value[4] === "T") return 5;
  return undefined;
}

/** Go's `time.Parse(layout, value)` (default zone UTC); returns Unix nanoseconds. */
function parse(layout: string, value: string): bigint {
  const origLayout = layout;
  const origValue = value;
  const parseError = (layoutElem: string, valueElem: string, message = ""): never =>
    fail(
      message === ""
        ? `parsing time ${timeQuote(origValue)} as ${timeQuote(origLayout)}: cannot parse ${timeQuote(valueElem)} as ${timeQuote(layoutElem)}`
        : `parsing time ${timeQuote(origValue)}${message}`,
    );
  let year = 0;
  let month = -1;
  let day = -1;
  let yday = -1;
  let hour = 0;
  let min = 0;
  let sec = 0;
  let nsec = 0;
  let utc = false;
  let zoneOffset: number | undefined;
  let zoneName = "";
  let amSet = false;
  let pmSet = false;

  for (;;) {
    const { prefix, std, suffix } = nextStdChunk(layout);
    const stdstr = layout.slice(prefix.length, layout.length - suffix.length);
    try {
      value = skip(value, prefix);
    } catch {
      return parseError(prefix, value);
    }
    if (!std) {
      if (value.length !== 0) parseError("", value, `: extra text: ${timeQuote(value)}`);
      break;
    }
    layout = suffix;
    const hold = value;
    let range = "";
    try {
      switch (std.kind) {
        case "Year": {
          if (value.length < 2) throw new Bad();
          year = atoi(value.slice(0, 2));
          value = value.slice(2);
          year += year >= 69 ? 1900 : 2000;
          break;
        }
        case "LongYear":
          if (value.length < 4 || !isDigitAt(value, 0)) throw new Bad();
          year = atoi(value.slice(0, 4));
          value = value.slice(4);
          break;
        case "Month":
          [month, value] = lookupName(SHORT_MONTHS, value);
          month++;
          break;
        case "LongMonth":
          [month, value] = lookupName(LONG_MONTHS, value);
          month++;
          break;
        case "NumMonth":
        case "ZeroMonth":
          [month, value] = getnum(value, std.kind === "ZeroMonth");
          if (month <= 0 || month > 12) range = "month";
          break;
        case "WeekDay":
          [, value] = lookupName(SHORT_DAYS, value);
          break;
        case "LongWeekDay":
          [, value] = lookupName(LONG_DAYS, value);
          break;
        case "Day":
        case "UnderDay":
        case "ZeroDay":
          if (std.kind === "UnderDay" && value[0] === " ") value = value.slice(1);
          [day, value] = getnum(value, std.kind === "ZeroDay");
          break;
        case "UnderYearDay":
        case "ZeroYearDay":
          for (let i = 0; i < 2; i++)
            if (std.kind === "UnderYearDay" && value[0] === " ") value = value.slice(1);
          [yday, value] = getnum3(value, std.kind === "ZeroYearDay");
          break;
        case "Hour":
          [hour, value] = getnum(value, false);
          if (hour < 0 || hour >= 24) range = "hour";
          break;
        case "Hour12":
        case "ZeroHour12":
          [hour, value] = getnum(value, std.kind === "ZeroHour12");
          if (hour < 0 || hour > 12) range = "hour";
          break;
        case "Minute":
        case "ZeroMinute":
          [min, value] = getnum(value, std.kind === "ZeroMinute");
          if (min < 0 || min >= 60) range = "minute";
          break;
        case "Second":
        case "ZeroSecond": {
          [sec, value] = getnum(value, std.kind === "ZeroSecond");
          if (sec < 0 || sec >= 60) {
            range = "second";
            break;
          }
          // A fractional second in the value but not in the layout.
          if (value.length >= 2 && commaOrPeriod(value[0]) && isDigitAt(value, 1)) {
            const next = nextStdChunk(layout).std?.kind;
            if (next === "FracSecond0" || next === "FracSecond9") break;
            let n = 2;
            while (n < value.length && isDigitAt(value, n)) n++;
            ({ ns: nsec, range } = parseNanoseconds(value, n));
            value = value.slice(n);
          }
          break;
        }
        case "PM":
        case "pm": {
          if (value.length < 2) throw new Bad();
          const p = value.slice(0, 2);
          value = value.slice(2);
          const [pm, am] = std.kind === "PM" ? ["PM", "AM"] : ["pm", "am"];
          if (p === pm) pmSet = true;
          else if (p === am) amSet = true;
          else throw new Bad();
          break;
        }
        case "TZ": {
          if (value.startsWith("UTC")) {
            utc = true;
            value = value.slice(3);
            break;
          }
          const n = parseTimeZone(value);
          if (n === undefined) throw new Bad();
          zoneName = value.slice(0, n);
          value = value.slice(n);
          break;
        }
        case "FracSecond0": {
          const ndigit = 1 + (std.digits ?? 0);
          if (value.length < ndigit) throw new Bad();
          ({ ns: nsec, range } = parseNanoseconds(value, ndigit));
          value = value.slice(ndigit);
          break;
        }
        case "FracSecond9": {
          if (value.length < 2 || !commaOrPeriod(value[0]) || !isDigitAt(value, 1)) break;
          let i = 0;
          while (i + 1 < value.length && isDigitAt(value, i + 1)) i++;
          ({ ns: nsec, range } = parseNanoseconds(value, 1 + i));
          value = value.slice(1 + i);
          break;
        }
        default: {
          // Numeric zone offsets; the ISO 8601 forms also accept "Z".
          if (ISO_KINDS.has(std.kind) && value[0] === "Z") {
            value = value.slice(1);
            utc = true;
            break;
          }
          let parts: [string, string, string, string];
          const k = std.kind;
          if (k === "ISO8601ColonTZ" || k === "NumColonTZ") {
            if (value.length < 6 || value[3] !== ":") throw new Bad();
            parts = [value.slice(0, 1), value.slice(1, 3), value.slice(4, 6), "00"];
            value = value.slice(6);
          } else if (k === "NumShortTZ" || k === "ISO8601ShortTZ") {
            if (value.length < 3) throw new Bad();
            parts = [value.slice(0, 1), value.slice(1, 3), "00", "00"];
            value = value.slice(3);
          } else if (k === "ISO8601ColonSecondsTZ" || k === "NumColonSecondsTZ") {
            if (value.length < 9 || value[3] !== ":" || value[6] !== ":") throw new Bad();
            parts = [value.slice(0, 1), value.slice(1, 3), value.slice(4, 6), value.slice(7, 9)];
            value = value.slice(9);
          } else if (k === "ISO8601SecondsTZ" || k === "NumSecondsTz") {
            if (value.length < 7) throw new Bad();
            parts = [value.slice(0, 1), value.slice(1, 3), value.slice(3, 5), value.slice(5, 7)];
            value = value.slice(7);
          } else {
            if (value.length < 5) throw new Bad();
            parts = [value.slice(0, 1), value.slice(1, 3), value.slice(3, 5), "00"];
            value = value.slice(5);
          }
          const [sign, hh, mm, ss] = parts;
          const [hr] = getnum(hh, true);
          const [mi] = getnum(mm, true);
          const [se] = getnum(ss, true);
          if (hr > 24) range = "time zone offset hour";
          if (mi > 60) range = "time zone offset minute";
          if (se > 60) range = "time zone offset second";
          zoneOffset = (hr * 60 + mi) * 60 + se;
          if (sign === "-") zoneOffset = -zoneOffset;
          else if (sign !== "+") throw new Bad();
        }
      }
    } catch (e) {
      if (!(e instanceof Bad)) throw e;
      if (range !== "") parseError(stdstr, value, `: ${range} out of range`);
      return parseError(stdstr, hold);
    }
    if (range !== "") parseError(stdstr, value, `: ${range} out of range`);
  }
  if (pmSet && hour < 12) hour += 12;
  else if (amSet && hour === 12) hour = 0;

  if (yday >= 0) {
    let d = 0;
    let m = 0;
    if (isLeap(year)) {
      if (yday === 31 + 29) {
        m = 2;
        d = 29;
      } else if (yday > 31 + 29) {
        yday--;
      }
    }
    if (yday < 1 || yday > 365) parseError("", value, ": day-of-year out of range");
    if (m === 0) {
      const before = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365];
      m = Math.floor((yday - 1) / 31) + 1;
      if (before[m]! < yday) m++;
      d = yday - before[m - 1]!;
    }
    if (month >= 0 && month !== m) parseError("", value, ": day-of-year does not match month");
    month = m;
    if (day >= 0 && day !== d) parseError("", value, ": day-of-year does not match day");
    day = d;
  } else {
    if (month < 0) month = 1;
    if (day < 0) day = 1;
  }
  if (day < 1 || day > daysIn(month, year)) parseError("", value, ": day out of range");

  let offset = 0;
  if (!utc) {
    if (zoneOffset !== undefined) offset = zoneOffset;
    else if (zoneName.length > 3 && zoneName.startsWith("GMT")) offset = atoi(zoneName.slice(3)) * 3600;
  }
  return fromCivil(year, month, day, hour, min, sec, nsec, UTC) - BigInt(offset) * NS_PER_SEC;
}

// ------------------------------------------------------------------------------------ durations

const DURATION_UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  "\u00b5s": 1000n,
  "\u03bcs": 1000n,
  ms: 1_000_000n,
  s: NS_PER_SEC,
  m: 60n * NS_PER_SEC,
  h: 3600n * NS_PER_SEC,
};

/** Go's `time.ParseDuration`. */
function parseDuration(orig: string): bigint {
  const invalid = (): never => fail(`time: invalid duration ${timeQuote(orig)}`);
  let s = orig;
  let d = 0n;
  let neg = false;
  if (s !== "" && (s[0] === "-" || s[0] === "+")) {
    neg = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0n;
  if (s === "") invalid();
  while (s !== "") {
    if (!(s[0] === "." || isDigitAt(s, 0))) invalid();
    const before = s.length;
    const lead = leadingInt(s) ?? invalid();
    let v = lead.x;
    s = lead.rest;
    const pre = before !== s.length;
    let f = 0n;
    let scale = 1;
    let post = false;
    if (s[0] === ".") {
      s = s.slice(1);
      const start = s.length;
      let overflow = false;
      let i = 0;
      for (; i < s.length && isDigitAt(s, i); i++) {
        if (overflow) continue;
        if (f > (2n ** 63n - 1n) / 10n) {
          overflow = true;
          continue;
        }
        const y = f * 10n + BigInt(s.charCodeAt(i) - 48);
        if (y > 2n ** 63n) {
          overflow = true;
          continue;
        }
        f = y;
        scale *= 10;
      }
      s = s.slice(i);
      post = start !== s.length;
    }
    if (!pre && !post) invalid();
    let i = 0;
    while (i < s.length && s[i] !== "." && !isDigitAt(s, i)) i++;
    if (i === 0) fail(`time: missing unit in duration ${timeQuote(orig)}`);
    const u = s.slice(0, i);
    s = s.slice(i);
    const unit = DURATION_UNITS[u];
    if (unit === undefined) fail(`time: unknown unit ${timeQuote(u)} in duration ${timeQuote(orig)}`);
    if (v > 2n ** 63n / unit) invalid();
    v *= unit;
    if (f > 0n) {
      // Go computes the fraction in float64.
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (v > 2n ** 63n) invalid();
    }
    d += v;
    if (d > 2n ** 63n) invalid();
  }
  if (neg) return BigInt.asIntN(64, -d);
  if (d > 2n ** 63n - 1n) invalid();
  return d;
}

// ------------------------------------------------------------------------------------ builtins

define("time.now_ns", (_args, ctx) => numberFromBigInt(ctx.now()));

define("time.parse_rfc3339_ns", (args) => safeNanos(parse(LAYOUT_CONSTANTS.RFC3339!, stringArg(args, 0))));

define("time.parse_ns", (args) => {
  const layout = stringArg(args, 0);
  const value = stringArg(args, 1);
  return safeNanos(parse(layoutOf(layout), value));
});

define("time.parse_duration_ns", (args) => numberFromBigInt(parseDuration(stringArg(args, 0))));

define("time.format", (args) => {
  const { ns, zone, layout } = tzTime(arg(args, 0));
  return makeString(format(ns, zone, layout === "" ? LAYOUT_CONSTANTS.RFC3339Nano! : layoutOf(layout)));
});

define("time.date", (args) => {
  const { ns, zone } = tzTime(arg(args, 0));
  const t = civil(ns, zone);
  return makeArray([int(t.year), int(t.month), int(t.day)]);
});

define("time.clock", (args) => {
  const { ns, zone } = tzTime(arg(args, 0));
  const t = civil(ns, zone);
  return makeArray([int(t.hour), int(t.minute), int(t.second)]);
});

define("time.weekday", (args) => {
  const { ns, zone } = tzTime(arg(args, 0));
  return str(LONG_DAYS[civil(ns, zone).weekday]!);
});

define("time.add_date", (args) => {
  const { ns, zone } = tzTime(arg(args, 0));
  const years = intArg(args, 1);
  const months = intArg(args, 2);
  const days = intArg(args, 3);
  const t = civil(ns, zone);
  return safeNanos(
    fromCivil(t.year + years, t.month + months, t.day + days, t.hour, t.minute, t.second, t.nsec, zone),
  );
});

define("time.diff", (args) => {
  const a = tzTime(arg(args, 0));
  const b = tzTime(arg(args, 1));
  // Both in the first operand's zone, earlier first.
  const [early, late] = a.ns > b.ns ? [b.ns, a.ns] : [a.ns, b.ns];
  const t1 = civil(early, a.zone);
  const t2 = civil(late, a.zone);
  let year = t2.year - t1.year;
  let month = t2.month - t1.month;
  let day = t2.day - t1.day;
  let hour = t2.hour - t1.hour;
  let min = t2.minute - t1.minute;
  let sec = t2.second - t1.second;
  if (sec < 0) {
    sec += 60;
    min--;
  }
  if (min < 0) {
    min += 60;
    hour--;
  }
  if (hour < 0) {
    hour += 24;
    day--;
  }
  if (day < 0) {
    day += daysIn(t1.month, t1.year);
    month--;
  }
  if (month < 0) {
    month += 12;
    year--;
  }
  return makeArray([year, month, day, hour, min, sec].map((n) => int(n)));
});

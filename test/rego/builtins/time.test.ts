/** `time.*` builtins: Go layouts, durations, IANA zones, exact nanoseconds and OPA's errors. */
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { BuiltinError, builtinTable, systemContext } from "../../../src/rego/builtins/index.ts";
import {
  makeArray,
  makeString,
  numberFromText,
  toJSONText,
  type Value,
} from "../../../src/rego/plan/value.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";

const n = (text: string | number): Value => numberFromText(String(text));
const s = (text: string): Value => makeString(text);
const a = (...items: Value[]): Value => makeArray(items);

/** The result as exact JSON text, "undefined", or the error as `code: message`. */
function run(name: string, ...args: Value[]): string {
  try {
    const r = builtinTable.get(name)!.impl(
      args,
      systemContext(() => 1_700_000_000_123_456_789n),
    );
    return r === undefined ? "undefined" : toJSONText(r);
  } catch (e) {
    if (e instanceof BuiltinError) return `${e.code}: ${e.message}`;
    throw e;
  }
}

const T = n("1670006453141828752"); // 2022-12-02T18:40:53.141828752Z

describe("time.parse_ns and time.parse_rfc3339_ns", () => {
  it("parses Go layouts and OPA's layout names to exact nanoseconds", () => {
    expect(run("time.parse_rfc3339_ns", s("2017-06-02T19:00:00-07:00"))).toBe("1496455200000000000");
    expect(run("time.parse_rfc3339_ns", s("1677-09-21T00:12:43.145224192-00:00"))).toBe(
      "-9223372036854775808",
    );
    expect(run("time.parse_rfc3339_ns", s("2262-04-11T23:47:16.854775807Z"))).toBe("9223372036854775807");
    expect(run("time.parse_ns", s("01/02 03:04:05PM '06 -0700"), s("06/02 07:00:00PM '17 -0700"))).toBe(
      "1496455200000000000",
    );
    expect(run("time.parse_ns", s("RFC822Z"), s("02 Jun 17 19:00 -0700"))).toBe("1496455200000000000");
    expect(run("time.parse_ns", s("RFC1123"), s("Mon, 02 Jan 2006 15:04:05 GMT+2"))).toBe(
      "1136207045000000000",
    );
    expect(run("time.parse_ns", s("Jan _2 2006 3:04:05.999 PM"), s("Feb  3 2013 11:00:00.123 PM"))).toBe(
      "1359932400123000000",
    );
    expect(run("time.parse_ns", s("2006-002"), s("2020-060"))).toBe("1582934400000000000");
  });

  it("reports Go's parse errors and OPA's range error", () => {
    expect(run("time.parse_ns", s("2006-01-02"), s("2020-02-30"))).toBe(
      'eval_builtin_error: time.parse_ns: parsing time "2020-02-30": day out of range',
    );
    expect(run("time.parse_ns", s("2006-01-02"), s("2020-0x-03"))).toBe(
      'eval_builtin_error: time.parse_ns: parsing time "2020-0x-03" as "2006-01-02": cannot parse "0x-03" as "01"',
    );
    expect(run("time.parse_ns", s("2006-01-02"), s("2020-02-03x"))).toContain('extra text: "x"');
    expect(run("time.parse_ns", s("15:04"), s("25:00"))).toContain("hour out of range");
    expect(run("time.parse_rfc3339_ns", s("2262-04-11T23:47:16.854775808Z"))).toBe(
      "eval_builtin_error: time.parse_rfc3339_ns: time outside of valid range",
    );
    expect(run("time.parse_ns", n(1), s("x"))).toBe(
      "eval_type_error: time.parse_ns: operand 1 must be string but got number",
    );
  });
});

describe("time.parse_duration_ns", () => {
  it("parses Go durations", () => {
    expect(run("time.parse_duration_ns", s("1h15m30.5s"))).toBe("4530500000000");
    expect(run("time.parse_duration_ns", s("-1.5µs"))).toBe("-1500");
    expect(run("time.parse_duration_ns", s("0"))).toBe("0");
    expect(run("time.parse_duration_ns", s("-9223372036854775808ns"))).toBe("-9223372036854775808");
    expect(run("time.parse_duration_ns", s("1"))).toContain('missing unit in duration "1"');
    expect(run("time.parse_duration_ns", s("1x"))).toContain('unknown unit "x" in duration "1x"');
    expect(run("time.parse_duration_ns", s("9223372036854775808ns"))).toContain("invalid duration");
  });
});

describe("time.format, date, clock, weekday", () => {
  it("formats with RFC3339Nano by default, in a zone and with layouts", () => {
    expect(run("time.format", T)).toBe('"2022-12-02T18:40:53.141828752Z"');
    expect(run("time.format", a(T, s("Asia/Kolkata")))).toBe('"2022-12-03T00:10:53.141828752+05:30"');
    expect(run("time.format", a(T, s("Asia/Kolkata"), s("RFC1123Z")))).toBe(
      '"Sat, 03 Dec 2022 00:10:53 +0530"',
    );
    expect(run("time.format", a(T, s("America/New_York"), s("UnixDate")))).toBe(
      '"Fri Dec  2 13:40:53 EST 2022"',
    );
    expect(run("time.format", a(T, s(""), s("3:4:5.000 pm __2 Z07")))).toBe('"6:40:53.141 pm 336 Z"');
    // Zone abbreviations as tzdata has them, numeric where it has none.
    expect(run("time.format", a(T, s("Europe/Berlin"), s("MST")))).toBe('"CET"');
    expect(run("time.format", a(T, s("Asia/Kolkata"), s("MST")))).toBe('"IST"');
    expect(run("time.format", a(T, s("America/Sao_Paulo"), s("MST -07")))).toBe('"-03 -03"');
  });

  it("reads the calendar in a zone", () => {
    expect(run("time.date", a(n("1517814000000000000"), s("America/Los_Angeles")))).toBe("[2018,2,4]");
    expect(run("time.clock", a(n("1517832000000000000"), s("America/New_York")))).toBe("[7,0,0]");
    expect(run("time.weekday", n("1517832000000000000"))).toBe('"Monday"');
    expect(run("time.date", n("-9223372036854775808"))).toBe("[1677,9,21]");
  });

  it("rejects unknown zones, bad operands and timestamps outside int64", () => {
    expect(run("time.date", a(n(0), s("Mars/Base")))).toBe(
      "eval_builtin_error: time.date: unknown time zone Mars/Base",
    );
    expect(run("time.date", n("15829776000000000000000"))).toBe(
      "eval_builtin_error: time.date: timestamp too big",
    );
    expect(run("time.date", n("1.5"))).toBe("eval_builtin_error: time.date: timestamp too big");
    expect(run("time.date", s("x"))).toBe(
      "eval_type_error: time.date: operand 1 must be either number (ns) or [number (ns), string (tz)] but got string",
    );
    expect(run("time.date", a(n(0), n(1)))).toBe(
      "eval_type_error: time.date: operand 1 must be string but got number",
    );
  });
});

describe("time.add_date and time.diff", () => {
  it("adds calendar units in the time's zone", () => {
    expect(run("time.add_date", n("1585852421593912000"), n(3), n(9), n(12))).toBe("1705257221593912000");
    expect(run("time.add_date", n("1585852421593912000"), n(-1), n(-1), n(-1))).toBe("1551465221593912000");
    // 14:33:41 EDT in April stays 14:33:41 in December, now EST.
    expect(run("time.add_date", a(n("1585852421593912000"), s("America/New_York")), n(0), n(8), n(0))).toBe(
      "1606937621593912000",
    );
    expect(run("time.add_date", n(0), n(2262), n(1), n(1))).toBe(
      "eval_builtin_error: time.add_date: time outside of valid range",
    );
  });

  it("computes calendar differences", () => {
    expect(run("time.diff", n(0), n("1585852421593912000"))).toBe("[50,3,1,18,33,41]");
    expect(run("time.diff", n("1580601600000000000"), n("1583020800000000000"))).toBe("[0,0,28,0,0,0]");
  });

  it("time.now_ns is the evaluation's clock", () => {
    expect(run("time.now_ns")).toBe("1700000000123456789");
  });
});

describe("end to end", () => {
  it("runs the time builtins as host calls of a compiled policy", async () => {
    const ok = buildPolicy(
      [
        {
          file: "t.rego",
          source: `package t
r := [time.date([time.parse_rfc3339_ns("2018-02-05T07:00:00Z"), "America/Los_Angeles"]), time.format([0, "Asia/Kolkata", "Mon Jan 2 15:04 -0700 2006"]), time.parse_duration_ns("1m30s")]`,
        },
      ],
      { entrypoints: ["t/r"] },
    );
    expect(ok.errors).toEqual([]);
    const p2 = await loadCompiledPolicy({ wasm: ok.wasm!, hostBuiltins: ok.hostBuiltins });
    expect(p2.evaluate({}, "t/r")).toEqual([
      { result: [[2018, 2, 4], "Thu Jan 1 05:30 +0530 1970", 90000000000] },
    ]);
  });
});

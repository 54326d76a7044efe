import { describe, expect, it } from "vitest";
import { call, callValue, errorOf, evalRego } from "./helpers-net.ts";

describe("net.cidr_contains", () => {
  it("contains addresses and subnets, IPv4-mapped IPv6 included", () => {
    expect(call("net.cidr_contains", "10.0.0.0/8", "10.1.2.3")).toBe(true);
    expect(call("net.cidr_contains", "10.0.0.0/8", "11.0.0.0")).toBe(false);
    expect(call("net.cidr_contains", "10.0.0.0/8", "10.0.0.0/9")).toBe(true);
    expect(call("net.cidr_contains", "10.0.0.0/9", "10.0.0.0/8")).toBe(false);
    expect(call("net.cidr_contains", "10.0.0.0/8", "::ffff:10.1.2.3")).toBe(true);
    expect(call("net.cidr_contains", "::ffff:10.0.0.0/104", "10.200.0.1")).toBe(true);
    expect(call("net.cidr_contains", "2001:db8::/32", "2001:db8:1::1")).toBe(true);
    expect(call("net.cidr_contains", "2001:db8::/32", "10.0.0.1")).toBe(false);
    expect(call("net.cidr_overlap", "10.0.0.0/8", "10.1.2.3")).toBe(true);
  });

  it("rejects what Go's net package rejects", () => {
    expect(errorOf("net.cidr_contains", "not-a-cidr", "1.2.3.4")).toBe(
      "eval_builtin_error: net.cidr_contains: invalid CIDR address: not-a-cidr",
    );
    expect(errorOf("net.cidr_contains", "10.0.0.0/8", "010.1.2.3")).toBe(
      "eval_builtin_error: net.cidr_contains: not a valid textual representation of an IP address or CIDR: 010.1.2.3",
    );
    expect(errorOf("net.cidr_contains", "10.0.0.0/8", 1)).toBe(
      "eval_type_error: net.cidr_contains: operand 1 must be string but got number",
    );
    expect(call("net.cidr_is_valid", "1.2.3.4/33")).toBe(false);
    expect(call("net.cidr_is_valid", "fe80::1%eth0/64")).toBe(false);
    expect(call("net.cidr_is_valid", "::/0")).toBe(true);
    expect(call("net.cidr_is_valid", 7)).toBe(false);
  });
});

describe("net.cidr_contains_matches", () => {
  it("keys matches by index for arrays, key for objects, element for sets, itself for strings", () => {
    expect(call("net.cidr_contains_matches", ["1.1.1.0/24", "1.1.2.0/24"], "1.1.2.9")).toEqual([
      [1, "1.1.2.9"],
    ]);
    expect(call("net.cidr_contains_matches", { a: "1.1.1.0/24" }, { b: ["1.1.1.1", "x"] })).toEqual([
      ["a", "b"],
    ]);
    const fromSets = callValue(
      "net.cidr_contains_matches",
      { set: [["1.1.1.0/24", "bar"]] },
      { set: ["1.1.1.1", "2.2.2.2"] },
    );
    expect(fromSets?.type).toBe("set");
    expect(call("net.cidr_contains_matches", { set: [["1.1.1.0/24", "bar"]] }, { set: ["1.1.1.1"] })).toEqual(
      [[["1.1.1.0/24", "bar"], "1.1.1.1"]],
    );
    expect(errorOf("net.cidr_contains_matches", "1.1.1.0/24", ["1.1.1.1", []])).toBe(
      "eval_builtin_error: net.cidr_contains_matches: operand 2: element must be string or non-empty array",
    );
  });
});

describe("net.cidr_intersects, net.cidr_expand", () => {
  it("intersects when either contains the other's first address", () => {
    expect(call("net.cidr_intersects", "10.0.0.0/8", "10.2.0.0/16")).toBe(true);
    expect(call("net.cidr_intersects", "10.0.0.0/16", "10.1.0.0/16")).toBe(false);
    expect(errorOf("net.cidr_intersects", "10.0.0.0/8", "x")).toBe(
      "eval_builtin_error: net.cidr_intersects: invalid CIDR address: x",
    );
  });

  it("expands to a set of addresses in Go's text form", () => {
    expect(callValue("net.cidr_expand", "192.168.1.1/30")?.type).toBe("set");
    expect(call("net.cidr_expand", "192.168.1.1/31")).toEqual(["192.168.1.0", "192.168.1.1"]);
    // Bounded: an evaluation cannot be cancelled, so a huge range is an error, not a hang.
    expect((call("net.cidr_expand", "10.0.0.0/16") as unknown[]).length).toBe(65_536);
    expect(errorOf("net.cidr_expand", "0.0.0.0/0")).toBe(
      "eval_builtin_error: net.cidr_expand: 0.0.0.0/0 holds 2^32 addresses, more than the 65536 Writ expands",
    );
    expect(call("net.cidr_expand", "2001:db8::/127")).toEqual(["2001:db8::", "2001:db8::1"]);
    expect(call("net.cidr_expand", "0:0:1::ffff/128")).toEqual(["0:0:1::ffff"]);
    expect(call("net.cidr_expand", "1:0:0:1:0:0:0:1/128")).toEqual(["1:0:0:1::1"]);
    expect(errorOf("net.cidr_expand", "192.168.1.1/33")).toBe(
      "eval_builtin_error: net.cidr_expand: invalid CIDR address: 192.168.1.1/33",
    );
  });
});

describe("net.cidr_merge", () => {
  it("merges adjacent and contained networks", () => {
    expect(call("net.cidr_merge", ["192.0.128.0/24", "192.0.129.0/24"])).toEqual(["192.0.128.0/23"]);
    expect(call("net.cidr_merge", { set: ["10.0.0.0/8", "10.1.0.0/16"] })).toEqual(["10.0.0.0/8"]);
    expect(call("net.cidr_merge", ["192.0.128.0/24", "192.0.130.0/24"])).toEqual([
      "192.0.128.0/24",
      "192.0.130.0/24",
    ]);
    expect(call("net.cidr_merge", ["192.0.129.0/24", "192.0.130.0/23"])).toEqual([
      "192.0.129.0/24",
      "192.0.130.0/23",
    ]);
    expect(call("net.cidr_merge", ["192.0.129.0/24", "192.0.130.0/24", "192.0.131.0/24"])).toEqual([
      "192.0.129.0/24",
      "192.0.130.0/23",
    ]);
    expect(call("net.cidr_merge", ["2001:db8::/33", "2001:db8:8000::/33"])).toEqual(["2001:db8::/32"]);
    expect(call("net.cidr_merge", [])).toEqual([]);
  });

  it("gives a plain IPv4 address its classful mask, and rejects a plain IPv6 address", () => {
    expect(call("net.cidr_merge", ["10.1.2.3"])).toEqual(["10.1.2.3/8"]);
    expect(errorOf("net.cidr_merge", ["2001:db8::1"])).toBe(
      "eval_builtin_error: net.cidr_merge: IPv6 invalid: needs prefix length",
    );
    expect(errorOf("net.cidr_merge", [1])).toBe("eval_builtin_error: net.cidr_merge: element must be string");
  });
});

describe("net builtins in a compiled policy", () => {
  it("runs through the SDK", async () => {
    expect(
      await evalRego(`r := [net.cidr_contains("10.0.0.0/8", "10.1.2.3"), net.cidr_is_valid("10.0.0.0/33")]`),
    ).toEqual([true, false]);
  });
});

describe("net.cidr_contains_matches order", () => {
  it("reads operand 2 only for elements of operand 1", () => {
    expect(call("net.cidr_contains_matches", [], ["1.1.1.1", []])).toEqual([]);
    expect(errorOf("net.cidr_contains_matches", ["1.1.1.0/24", 5], [[]])).toBe(
      "eval_builtin_error: net.cidr_contains_matches: operand 2: element must be string or non-empty array",
    );
  });
});

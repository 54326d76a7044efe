/** `rand.intn`, `uuid.rfc4122` and `uuid.parse`: memoized per evaluation, OPA's fields. */
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { BuiltinError, builtinTable, systemContext } from "../../../src/rego/builtins/index.ts";
import type { BuiltinContext } from "../../../src/rego/builtins/registry.ts";
import { makeString, numberFromText, toJSONText, type Value } from "../../../src/rego/plan/value.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";

const n = (text: string | number): Value => numberFromText(String(text));
const s = (text: string): Value => makeString(text);

function run(name: string, args: Value[], ctx: BuiltinContext = systemContext(() => 0n)): string {
  try {
    const r = builtinTable.get(name)!.impl(args, ctx);
    return r === undefined ? "undefined" : toJSONText(r);
  } catch (e) {
    if (e instanceof BuiltinError) return `${e.code}: ${e.message}`;
    throw e;
  }
}

describe("rand.intn", () => {
  it("is in [0, n), the same for the same (str, n) within an evaluation", () => {
    const ctx = systemContext(() => 0n);
    const first = run("rand.intn", [s("k"), n(1000)], ctx);
    expect(Number(first)).toBeGreaterThanOrEqual(0);
    expect(Number(first)).toBeLessThan(1000);
    for (let i = 0; i < 5; i++) expect(run("rand.intn", [s("k"), n(1000)], ctx)).toBe(first);
    // A negative bound is its absolute value, and shares its memo entry.
    expect(run("rand.intn", [s("k"), n(-1000)], ctx)).toBe(first);
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) seen.add(run("rand.intn", [s(`k${i}`), n(3)], ctx));
    expect([...seen].sort()).toEqual(["0", "1", "2"]);
  });

  it("gives 0 for n = 0 and rejects non-integers", () => {
    expect(run("rand.intn", [s("k"), n(0)])).toBe("0");
    expect(run("rand.intn", [s("k"), n("1.5")])).toBe(
      "eval_type_error: rand.intn: operand 2 must be integer number but got floating-point number",
    );
    expect(run("rand.intn", [n(1), n(2)])).toBe(
      "eval_type_error: rand.intn: operand 1 must be string but got number",
    );
  });
});

describe("uuid.rfc4122", () => {
  it("is a random v4 UUID, the same for the same key within an evaluation", () => {
    const ctx = systemContext(() => 0n);
    const u = JSON.parse(run("uuid.rfc4122", [s("a")], ctx)) as string;
    expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(run("uuid.rfc4122", [s("a")], ctx)).toBe(JSON.stringify(u));
    expect(run("uuid.rfc4122", [s("b")], ctx)).not.toBe(JSON.stringify(u));
    expect(run("uuid.rfc4122", [s("a")], systemContext())).not.toBe(JSON.stringify(u));
  });
});

describe("uuid.parse", () => {
  it("returns version and variant, and the decoded fields of v1 and v2", () => {
    expect(run("uuid.parse", [s("{00000000-0000-4000-8000-000000000000}")])).toBe(
      '{"variant":"RFC4122","version":4}',
    );
    expect(run("uuid.parse", [s("6bea8ef2d3d33cd184e09bab06a52ece")])).toBe(
      '{"variant":"RFC4122","version":3}',
    );
    expect(run("uuid.parse", [s("urn:uuid:000003e8-48b9-21ee-b200-325096b39f47")])).toBe(
      '{"clocksequence":12800,"domain":"Person","id":1000,"macvariables":"local:unicast","nodeid":"32-50-96-b3-9f-47","time":1693566990121469600,"variant":"RFC4122","version":2}',
    );
    expect(run("uuid.parse", [s("00000000-0000-1000-c000-ffffffffffff")])).toContain('"variant":"Microsoft"');
  });

  it("is undefined for text that is not a UUID", () => {
    expect(run("uuid.parse", [s("123")])).toBe("undefined");
    expect(run("uuid.parse", [s("00000000-0000-4000-8000-00000000000g")])).toBe("undefined");
    expect(run("uuid.parse", [s("urn:uuix:00000000-0000-4000-8000-000000000000")])).toBe("undefined");
  });
});

describe("end to end", () => {
  it("memoizes uuid.rfc4122 and rand.intn across a compiled policy's evaluation", async () => {
    const built = buildPolicy(
      [
        {
          file: "r.rego",
          source: `package r
r := [count({uuid.rfc4122("k") | numbers.range(1, 20)[_]}), count({rand.intn("k", 1000000) | numbers.range(1, 20)[_]}), uuid.parse("00000000-0000-4000-8000-000000000000").version]`,
        },
      ],
      { entrypoints: ["r/r"] },
    );
    expect(built.errors).toEqual([]);
    const policy = await loadCompiledPolicy({ wasm: built.wasm!, hostBuiltins: built.hostBuiltins });
    expect(policy.evaluate({}, "r/r")).toEqual([{ result: [1, 1, 4] }]);
  });
});

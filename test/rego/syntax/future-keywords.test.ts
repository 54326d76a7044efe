/**
 * The future keywords `not`, `and` and `or` (`import future.keywords.<kw>`), and keywords as
 * ref parts (`input.in`, `data.x.not.y`): parsing, and evaluation of what they lower to.
 */
import { describe, expect, it } from "vitest";
import { stripLocations } from "../../../src/rego/syntax/equality.ts";
import { parseModule } from "../../../src/rego/syntax/index.ts";
import { printModule } from "../../../src/rego/syntax/printer.ts";
import { parseMessages, planRule, wasmRule } from "./evaluate.ts";

const header =
  "package p\nimport future.keywords.and\nimport future.keywords.or\nimport future.keywords.not\n";

function node(source: string): unknown {
  const parsed = parseModule(`${header}r if { ${source} }\n`, "p.rego");
  expect(parsed.errors.map((e) => e.message)).toEqual([]);
  const body = parsed.module!.rules[0]!.body;
  expect(body).toHaveLength(1);
  return shape(body[0]!);
}

/** A compact picture of an expression: `(a or b)`, `not{…}`, or its source term type. */
function shape(expr: { negated: boolean; node: { type: string } }): string {
  const n = expr.node as { type: string; op?: string; lhs?: unknown[]; rhs?: unknown[]; body?: unknown[] };
  const prefix = expr.negated ? "not " : "";
  if (n.type === "logical") {
    const side = (body: unknown[]) =>
      body.length === 1 ? shape(body[0] as never) : `{${body.map((e) => shape(e as never)).join("; ")}}`;
    return `${prefix}(${side(n.lhs!)} ${n.op} ${side(n.rhs!)})`;
  }
  if (n.type === "body") return `${prefix}{${n.body!.map((e) => shape(e as never)).join("; ")}}`;
  return `${prefix}${n.type}`;
}

describe("parsing", () => {
  it("folds and/or with `and` binding tighter, left to right", () => {
    expect(node("input.a or input.b")).toBe("(ref or ref)");
    expect(node("input.a or input.b and input.c")).toBe("(ref or (ref and ref))");
    expect(node("input.a and input.b or input.c")).toBe("((ref and ref) or ref)");
    expect(node("input.a or input.b or input.c")).toBe("((ref or ref) or ref)");
  });

  it("reads braced bodies, negations and parenthesized groups as operands", () => {
    expect(node("{ x := 1; x > 0 } or input.b")).toBe("({call; call} or ref)");
    expect(node("not { input.a; input.b } and input.c")).toBe("(not {ref; ref} and ref)");
    expect(node("(input.a or input.b) and input.c")).toBe("((ref or ref) and ref)");
    expect(node("not input.a or input.b")).toBe("(not ref or ref)");
  });

  it("leaves braces that are not followed by and/or as terms", () => {
    expect(node('{"a": 1}["a"] == 1')).toBe("call");
    expect(node("(1 + 2) == 3")).toBe("call");
  });

  it("keeps `and` and `or` as names without the import", () => {
    const errors = parseMessages("package p\nr if { input.a or input.b }\n");
    expect(errors.some((m) => m.includes("expected \\n or ; or }"))).toBe(true);
    expect(parseMessages("package p\nor := 1\nand := 2\n")).toEqual([]);
  });

  it("lists the new keywords when an unknown one is imported", () => {
    expect(parseMessages("package p\nimport future.keywords.xor\n")).toEqual([
      "p.rego:2:8: rego_parse_error: unexpected keyword, must be one of [and contains every if in not or]",
    ]);
  });

  it("enables all of them with `import future.keywords`", () => {
    expect(parseMessages("package p\nimport future.keywords\nr if { not { input.a } or input.b }\n")).toEqual(
      [],
    );
  });
});

describe("evaluation", () => {
  const source = `${header}
either if input.a or input.b
both if input.a and input.b
mixed if input.a or input.b and input.c
neither if not { input.a; input.b }
grouped if (input.a or input.b) and input.c
bodies if { x := input.n; x > 1 } or { x := input.n; x < -1 }
bound if {
  input.n > 0 and y := input.n * 2
  y > 3
}
`;
  const cases: Array<[string, unknown, boolean | undefined]> = [
    ["either", { a: true }, true],
    ["either", { b: true }, true],
    ["either", {}, undefined],
    ["both", { a: true, b: true }, true],
    ["both", { a: true }, undefined],
    ["mixed", { b: true }, undefined],
    ["mixed", { b: true, c: true }, true],
    ["mixed", { a: true }, true],
    ["neither", { a: true }, true],
    ["neither", { a: true, b: true }, undefined],
    ["grouped", { a: true }, undefined],
    ["grouped", { b: true, c: true }, true],
    ["bodies", { n: 5 }, true],
    ["bodies", { n: -5 }, true],
    ["bodies", { n: 0 }, undefined],
    ["bound", { n: 2 }, true],
    ["bound", { n: 1 }, undefined],
  ];
  for (const [rule, input, want] of cases) {
    it(`${rule} for ${JSON.stringify(input)} is ${want}`, () => {
      expect(planRule(source, `data.p.${rule}`, input)).toBe(want);
    });
  }

  it("runs in a compiled policy", async () => {
    expect(await wasmRule(source, "p/mixed", { b: true, c: true })).toBe(true);
    expect(await wasmRule(source, "p/neither", { a: true, b: true })).toBeUndefined();
  });
});

describe("keywords in refs", () => {
  it("reads keywords after a dot as ref parts", async () => {
    const source = `package p
r := [input.in, input.not.every, input.if.contains.some, input.package, input.null, input.and]
`;
    const input = {
      in: 1,
      not: { every: 2 },
      if: { contains: { some: 3 } },
      package: 4,
      null: 5,
      and: 6,
    };
    expect(planRule(source, "data.p.r", input)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await wasmRule(source, "p/r", input)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("defines and reads rules whose paths hold keywords", () => {
    const source = `package p
x.not.y := 1
foo.every := 2
r := [data.p.x.not.y, foo.every]
`;
    expect(planRule(source, "data.p.r")).toEqual([1, 2]);
  });
});

describe("more forms", () => {
  it("negates a parenthesized chain and hoists a trailing with", () => {
    const source = `${header}
r if not (input.a or input.b)
s if input.a or input.b with input as {"b": true}
`;
    expect(planRule(source, "data.p.r", {})).toBe(true);
    expect(planRule(source, "data.p.r", { b: true })).toBeUndefined();
    expect(planRule(source, "data.p.s", {})).toBe(true);
    const parsed = parseModule(source, "p.rego");
    const s = parsed.module!.rules[1]!.body[0]!;
    expect(s.with).toHaveLength(1);
  });

  it("prints chains back to the same tree", () => {
    const source = `${header}
r if {
  x := 1 or { y := 2; y > 1 } and not input.z
  not (input.a or input.b)
}
`;
    const first = parseModule(source, "p.rego").module!;
    const printed = printModule(first);
    const second = parseModule(printed, "p.rego");
    expect(second.errors).toEqual([]);
    expect(stripLocations(second.module!.rules)).toEqual(stripLocations(first.rules));
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type {
  Body,
  CallTerm,
  Every,
  Expr,
  Import,
  Location,
  Module,
  RefTerm,
  Rule,
  RuleHead,
  SomeDecl,
  Term,
  VarTerm,
  With,
} from "../../../src/rego/syntax/index.ts";
import {
  astEqual,
  parseModule,
  parseQuery,
  parseTerm,
  printBody,
  printModule,
  printTerm,
  stripLocations,
} from "../../../src/rego/syntax/index.ts";

const FILE = "gen.rego";

function reparseModule(module: Module): Module | undefined {
  const printed = printModule(module);
  const { module: again, errors } = parseModule(printed, FILE);
  if (errors.length > 0)
    throw new Error(`${errors.map((e) => e.message).join("\n")}\n--- printed:\n${printed}`);
  return again;
}

function roundTrips(source: string): string {
  const { module, errors } = parseModule(source, FILE);
  expect(errors.map((e) => e.message)).toEqual([]);
  const printed = printModule(module!);
  const again = reparseModule(module!);
  expect(stripLocations(again)).toEqual(stripLocations(module));
  return printed;
}

describe("printModule", () => {
  it("prints in opa fmt style", () => {
    const source = [
      "package a.b",
      "import rego.v1",
      "import data.lib as l",
      "default allow := false",
      'allow if { input.user == "admin"; count(input.roles) > 0 }',
      "roles contains r if { some r in input.roles }",
      "f(x) := y if { y := x * 2 } else := 0",
      "p := 1",
    ].join("\n");
    expect(roundTrips(source)).toBe(
      [
        "package a.b",
        "",
        "import rego.v1",
        "import data.lib as l",
        "",
        "default allow := false",
        "",
        "allow if {",
        '\tinput.user == "admin"',
        "\tcount(input.roles) > 0",
        "}",
        "",
        "roles contains r if {",
        "\tsome r in input.roles",
        "}",
        "",
        "f(x) := y if {",
        "\ty := x * 2",
        "} else := 0",
        "",
        "p := 1",
        "",
      ].join("\n"),
    );
  });

  it("prints every as a nested block and keeps comments", () => {
    const source =
      "package a\n# rule p\np if {\n\t# check all\n\tevery x in input.xs { x > 0; x < 10 }\n}\n# end\n";
    expect(roundTrips(source)).toBe(
      "package a\n\n# rule p\np if {\n\t# check all\n\tevery x in input.xs {\n\t\tx > 0\n\t\tx < 10\n\t}\n}\n# end\n",
    );
  });

  it("keeps constructs that need care when printed", () => {
    roundTrips("package a\np if { x := y\n-1 == z }\nq if { (a | b) }\nr if { {a | b} }\ns if {\n\t{}\n}");
    roundTrips(
      'package a\np := [(x | y), 2]\nq := [(x + 1) | x := 1]\nr := {(a | b): 1}\ns := {"k": (a | b)}',
    );
    roundTrips(
      'package a["b-c"]\np := x.y["z-w"][0][k]\nq := (1 + 2).x\nr := f(k, (x, y in z))\nt := (a in b) in c',
    );
    roundTrips('package a\np := "\\ufeff\\u0000\\n\\t\\"\\\\ é"\nq := `raw\n"text"`\nr := -1.5e-3 - -2');
    roundTrips(
      "package a\np if { not x.y with input as {} with data.a.b as [1] }\nq if { some x, y; some k, v in xs; every z in zs { z } }",
    );
    roundTrips(
      "package a\np if { true } { false }\nq[x] := 1 if { x := 2 }\nr.s.t contains 1\nf(1)\ndefault g(_, _) := 1",
    );
  });
});

describe("printTerm and printBody", () => {
  it("prints terms with minimal parentheses", () => {
    const cases: Array<[string, string]> = [
      ["1 + 2 * 3", "1 + 2 * 3"],
      ["(1 + 2) * 3", "(1 + 2) * 3"],
      ["a - (b - c)", "a - (b - c)"],
      ["(a - b) - c", "a - b - c"],
      ["(k, v in xs)", "k, v in xs"],
      ["[(k, v in xs)]", "[(k, v in xs)]"],
      ["set()", "set()"],
      ["{}", "{}"],
      ['{"a": {1, 2}}', '{"a": {1, 2}}'],
      ["plus(1, 2)", "1 + 2"],
      ["eq(1, 2)", "eq(1, 2)"],
      ['x["a b"].c[d]', 'x["a b"].c[d]'],
    ];
    for (const [source, printed] of cases) {
      const { body } = parseQuery(`x := ${source}`, "t.rego");
      const assignment = body![0]!.node as CallTerm;
      expect(printTerm(assignment.args[1]!)).toBe(printed);
    }
    expect(printTerm(parseTerm("[1, 2]", "t.rego").term!)).toBe("[1, 2]");
  });

  it("prints a query on one line", () => {
    const { body } = parseQuery("x := 1\ny = x\n-1 == y", "q.rego");
    const printed = printBody(body!);
    expect(printed).toBe("x := 1; y = x - 1 == y");
    expect(stripLocations(parseQuery(printed, "q.rego").body)).toEqual(stripLocations(body));
  });
});

// ---------------------------------------------------------------------------------------------
// Generated ASTs: anything the parser can produce must print and parse back to itself.

const LOC: Location = { file: FILE, line: 1, col: 1, offset: 0 };
const NAMES = ["x", "y", "z", "foo", "bar_1", "_", "input", "data", "__local0__"];
const RULE_NAMES = ["p", "q", "r", "allow", "f", "g1"];
const KEYWORDS = [
  "as",
  "contains",
  "default",
  "else",
  "every",
  "false",
  "if",
  "import",
  "in",
  "not",
  "null",
  "package",
  "some",
  "true",
  "with",
];
const OPERATORS = [
  "plus",
  "minus",
  "mul",
  "div",
  "rem",
  "and",
  "or",
  "equal",
  "neq",
  "lt",
  "lte",
  "gt",
  "gte",
];

const variable = (name: string): VarTerm => ({ type: "var", name, loc: LOC });
const str = (value: string): Term => ({ type: "string", value, loc: LOC });
const refTo = (head: Term, path: Term[]): RefTerm => ({ type: "ref", head, path, loc: LOC });
const callOf = (op: VarTerm | RefTerm, args: Term[]): CallTerm => ({ type: "call", op, args, loc: LOC });
const member = (arity: 2 | 3) => refTo(variable("internal"), [str(arity === 2 ? "member_2" : "member_3")]);
const exprOf = (node: Expr["node"], negated = false, withs: With[] = []): Expr => ({
  negated,
  node,
  with: withs,
  loc: LOC,
});

const numberText = fc
  .tuple(
    fc.boolean(),
    fc.oneof(fc.constant("0"), fc.bigInt({ min: 1n, max: 10n ** 30n }).map(String)),
    fc.option(
      fc.nat({ max: 99999 }).map((digits) => `.${digits}`),
      { nil: "" },
    ),
    fc.option(
      fc.integer({ min: -300, max: 300 }).map((e) => `e${e}`),
      { nil: "" },
    ),
  )
  .map(([negative, integer, fraction, exponent]) => `${negative ? "-" : ""}${integer}${fraction}${exponent}`);

const scalar: fc.Arbitrary<Term> = fc.oneof(
  fc.constant<Term>({ type: "null", loc: LOC }),
  fc.boolean().map((value): Term => ({ type: "boolean", value, loc: LOC })),
  numberText.map((value): Term => ({ type: "number", value, loc: LOC })),
  fc.string({ unit: "grapheme", maxLength: 6 }).map(str),
);

const pathString = fc
  .oneof(fc.constantFrom("a", "b_2", "if", "contains", "null"), fc.string({ maxLength: 4 }))
  .map(str);

/** A ref that names something: `data.a.b`, `input.x`, `foo.bar` (with targets, call operators). */
const namedRef: fc.Arbitrary<RefTerm> = fc
  .tuple(
    fc.constantFrom(...NAMES.filter((name) => name !== "_")),
    fc.array(pathString, { minLength: 1, maxLength: 3 }),
  )
  .map(([head, path]) => refTo(variable(head), path));

const { term: termArb, body: bodyArb } = fc.letrec<{ term: Term; body: Body; expr: Expr }>((tie) => {
  const term = tie("term");
  const body = tie("body");
  const smallBody = fc.array(tie("expr"), { minLength: 1, maxLength: 2 });
  const items = fc.array(term, { maxLength: 3 });
  return {
    term: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      scalar,
      fc.constantFrom(...NAMES).map(variable),
      items.map((values): Term => ({ type: "array", items: values, loc: LOC })),
      items.map((values): Term => ({ type: "set", items: values, loc: LOC })),
      fc
        .array(fc.tuple(term, term), { maxLength: 3 })
        .map((entries): Term => ({ type: "object", entries, loc: LOC })),
      fc
        .tuple(term, smallBody)
        .map(([value, b]): Term => ({ type: "arraycompr", term: value, body: b, loc: LOC })),
      fc
        .tuple(term, smallBody)
        .map(([value, b]): Term => ({ type: "setcompr", term: value, body: b, loc: LOC })),
      fc
        .tuple(term, term, smallBody)
        .map(([key, value, b]): Term => ({ type: "objectcompr", key, value, body: b, loc: LOC })),
      fc
        .tuple(
          fc.oneof(
            fc.constantFrom(...NAMES).map(variable),
            items.map((values): Term => ({ type: "array", items: values, loc: LOC })),
            fc.tuple(fc.constantFrom("f", "g"), items).map(([name, args]) => callOf(variable(name), args)),
          ),
          fc.array(fc.oneof(pathString, term), { minLength: 1, maxLength: 3 }),
        )
        .map(([head, path]): Term => refTo(head, path)),
      fc.tuple(fc.constantFrom(...OPERATORS), term, term).map(([op, a, b]) => callOf(variable(op), [a, b])),
      fc.tuple(term, term).map(([a, b]) => callOf(member(2), [a, b])),
      fc.tuple(term, term, term).map(([a, b, c]) => callOf(member(3), [a, b, c])),
      fc
        .tuple(fc.oneof(fc.constantFrom("count", "f", "eq", "assign", "set").map(variable), namedRef), items)
        .filter(([op, args]) => !(op.type === "var" && op.name === "set" && args.length === 0))
        .map(([op, args]) => callOf(op, args)),
    ),
    body: fc.array(tie("expr"), { minLength: 1, maxLength: 3 }),
    expr: fc.oneof(
      { depthSize: "small" },
      fc
        .tuple(fc.boolean(), term, fc.array(withArb(term), { maxLength: 2 }))
        .map(([neg, node, w]) => exprOf(node, neg, w)),
      fc
        .tuple(fc.constantFrom("assign", "eq"), term, term)
        .map(([op, a, b]) => exprOf(callOf(variable(op), [a, b]))),
      fc
        .array(fc.constantFrom(...NAMES).map(variable), { minLength: 1, maxLength: 3 })
        .map((symbols) => exprOf({ type: "some", symbols, loc: LOC } satisfies SomeDecl)),
      fc
        .tuple(
          fc.oneof(fc.tuple(term, term).map((args) => callOf(member(2), args))),
          fc.array(withArb(term), { maxLength: 1 }),
        )
        .map(([symbol, w]) =>
          exprOf({ type: "some", symbols: [symbol], loc: LOC } satisfies SomeDecl, false, w),
        ),
      fc
        .tuple(fc.tuple(term, term, term).map((args) => callOf(member(3), args)))
        .map(([symbol]) => exprOf({ type: "some", symbols: [symbol], loc: LOC } satisfies SomeDecl)),
      fc
        .tuple(
          fc.option(fc.constantFrom(...NAMES).map(variable), { nil: undefined }),
          fc.constantFrom(...NAMES),
          term,
          body,
        )
        .map(([key, value, domain, b]) =>
          exprOf({ type: "every", key, value: variable(value), domain, body: b, loc: LOC } satisfies Every),
        ),
    ),
  };
});

function withArb(term: fc.Arbitrary<Term>): fc.Arbitrary<With> {
  return fc
    .tuple(fc.oneof(fc.constantFrom("input", "data", "f").map(variable), namedRef), term)
    .map(([target, value]) => ({ target, value, loc: LOC }));
}

/** Constant values, as default rules require. */
const constant: fc.Arbitrary<Term> = fc.letrec<{ value: Term }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    scalar,
    fc.array(tie("value"), { maxLength: 3 }).map((items): Term => ({ type: "array", items, loc: LOC })),
    fc.array(tie("value"), { maxLength: 3 }).map((items): Term => ({ type: "set", items, loc: LOC })),
  ),
})).value;

const groundPath = fc.array(
  fc.oneof(
    pathString,
    numberText.map((value): Term => ({ type: "number", value, loc: LOC })),
  ),
  {
    maxLength: 2,
  },
);
const anyPath = fc.array(fc.oneof(pathString, fc.constantFrom("x", "k").map(variable)), { maxLength: 2 });

function headRef(name: string, path: Term[]): VarTerm | RefTerm {
  return path.length === 0 ? variable(name) : refTo(variable(name), path);
}

function head(fields: Partial<RuleHead> & Pick<RuleHead, "ref">): RuleHead {
  return { args: undefined, key: undefined, value: undefined, assign: false, loc: LOC, ...fields };
}

function ruleOf(ruleHead: RuleHead, ruleBody: Body, elseRule?: Rule): Rule {
  return { default: false, head: ruleHead, body: ruleBody, else: elseRule, loc: LOC };
}

const valueAndAssign = fc.tuple(termArb, fc.boolean());

const completeRule: fc.Arbitrary<Rule> = fc
  .tuple(fc.constantFrom(...RULE_NAMES), anyPath, fc.option(valueAndAssign, { nil: undefined }))
  .chain(([name, path, value]) => {
    const ruleHead = head({ ref: headRef(name, path), value: value?.[0], assign: value?.[1] ?? false });
    // Without a value the rule needs a body; `p[x]` and `a.b` alone would read as partial sets.
    return (value === undefined ? bodyArb : fc.oneof(fc.constant<Body>([]), bodyArb)).map((b) =>
      ruleOf(ruleHead, b),
    );
  });

const functionRule: fc.Arbitrary<Rule> = fc
  .tuple(
    fc.constantFrom(...RULE_NAMES),
    fc.array(pathString, { maxLength: 1 }),
    fc.array(termArb, { minLength: 1, maxLength: 2 }),
    fc.option(valueAndAssign, { nil: undefined }),
    fc.oneof(fc.constant<Body>([]), bodyArb),
  )
  .map(([name, path, args, value, b]) =>
    ruleOf(head({ ref: headRef(name, path), args, value: value?.[0], assign: value?.[1] ?? false }), b),
  );

const multiValueRule: fc.Arbitrary<Rule> = fc
  .tuple(
    fc.constantFrom(...RULE_NAMES),
    fc.array(pathString, { maxLength: 1 }),
    termArb,
    fc.oneof(fc.constant<Body>([]), bodyArb),
  )
  .map(([name, path, key, b]) => ruleOf(head({ ref: headRef(name, path), key }), b));

const defaultRule: fc.Arbitrary<Rule> = fc
  .tuple(
    fc.constantFrom(...RULE_NAMES),
    groundPath,
    fc.option(fc.array(fc.constantFrom("a", "b", "_"), { maxLength: 2 }), { nil: undefined }),
    constant,
    fc.boolean(),
  )
  .filter(
    ([, , args]) =>
      args === undefined ||
      args.filter((a) => a !== "_").length === new Set(args.filter((a) => a !== "_")).size,
  )
  .map(([name, path, args, value, assign]) => ({
    default: true,
    head: head({ ref: headRef(name, path), args: args?.map(variable), value, assign }),
    body: [],
    else: undefined,
    loc: LOC,
  }));

/** `else` branches: a body unless it is the last one and has a value. */
const elseChain = (ruleHead: RuleHead): fc.Arbitrary<Rule | undefined> =>
  fc
    .array(fc.tuple(fc.option(valueAndAssign, { nil: undefined }), bodyArb, fc.boolean()), { maxLength: 2 })
    .map((branches) => {
      let next: Rule | undefined;
      branches.reverse().forEach(([value, b, dropBody], i) => {
        const last = i === 0;
        const elseHead = head({
          ref: ruleHead.ref,
          args: ruleHead.args,
          value: value?.[0],
          assign: value?.[1] ?? false,
        });
        next = ruleOf(elseHead, last && dropBody && value !== undefined ? [] : b, next);
      });
      return next;
    });

const ruleWithElse: fc.Arbitrary<Rule> = fc
  .tuple(
    fc.constantFrom(...RULE_NAMES),
    groundPath,
    fc.option(fc.array(termArb, { maxLength: 2 }), { nil: undefined }),
    fc.option(valueAndAssign, { nil: undefined }),
    bodyArb,
  )
  .chain(([name, path, args, value, b]) => {
    const ruleHead = head({ ref: headRef(name, path), args, value: value?.[0], assign: value?.[1] ?? false });
    return elseChain(ruleHead).map((elseRule) => ruleOf(ruleHead, b, elseRule));
  });

// Without an alias OPA rejects an import path ending in a keyword (`import data.x.if`).
const importArb: fc.Arbitrary<Import> = fc
  .tuple(
    fc.constantFrom("data", "input"),
    fc.array(
      fc
        .oneof(fc.constantFrom("lib", "x_1"), fc.string({ minLength: 1, maxLength: 4 }))
        .filter((name) => !KEYWORDS.includes(name))
        .map(str),
      { maxLength: 2 },
    ),
    fc.option(fc.constantFrom("lib", "u"), { nil: undefined }),
  )
  .map(([root, path, alias]) => ({ path: headRef(root, path), alias, loc: LOC }));

const moduleArb: fc.Arbitrary<Module> = fc
  .tuple(
    fc.array(fc.constantFrom("a", "b", "test", "if"), { minLength: 1, maxLength: 3 }),
    fc.array(importArb, { maxLength: 2 }),
    fc.array(fc.oneof(completeRule, functionRule, multiValueRule, defaultRule, ruleWithElse), {
      maxLength: 4,
    }),
  )
  .map(([path, imports, rules]) => ({
    file: FILE,
    package: { path, loc: LOC },
    imports,
    rules,
    comments: [],
    annotations: [],
  }));

describe("round trip of generated ASTs", () => {
  it("prints terms that parse back to the same term", () => {
    fc.assert(
      fc.property(termArb, (term) => {
        const printed = printTerm(term);
        const parsed = parseQuery(`x := ${printed}`, FILE);
        expect(
          parsed.errors.map((e) => e.message),
          printed,
        ).toEqual([]);
        const node = parsed.body![0]!.node as CallTerm;
        expect(astEqual(node.args[1], term), printed).toBe(true);
      }),
      { numRuns: 1500 },
    );
  });

  it("prints bodies that parse back to the same body", () => {
    fc.assert(
      fc.property(bodyArb, (body) => {
        const printed = printBody(body);
        const parsed = parseQuery(printed, FILE);
        expect(
          parsed.errors.map((e) => e.message),
          printed,
        ).toEqual([]);
        expect(astEqual(parsed.body, body), printed).toBe(true);
      }),
      { numRuns: 800 },
    );
  });

  it("prints modules that parse back to the same module", () => {
    fc.assert(
      fc.property(moduleArb, (module) => {
        const again = reparseModule(module);
        expect(astEqual(again, module), printModule(module)).toBe(true);
      }),
      { numRuns: 800 },
    );
  });
});

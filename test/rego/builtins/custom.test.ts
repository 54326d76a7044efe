/**
 * Custom builtins (src/rego/builtins/custom.ts) through the compiler and the real opa-wasm SDK,
 * with the small set in fixtures/custom-builtins.mjs.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import {
  CustomBuiltinError,
  type CustomBuiltins,
  defineCustomBuiltins,
  loadCustomBuiltins,
} from "../../../src/rego/builtins/index.ts";
import { readBundle, writeBundle } from "../../../src/rego/bundle/index.ts";
import {
  CUSTOM_BUILTINS_METADATA,
  loadCompiledPolicy,
  loadPolicyFromBundle,
  PolicyEvaluationError,
  PolicyLoadError,
} from "../../../src/rego/policy.ts";

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "custom-builtins.mjs");

let builtins: CustomBuiltins;
beforeAll(async () => {
  builtins = await loadCustomBuiltins([fixture]);
});

const source = `package t

owner := acme.owner_of("/srv/app")
nobody := acme.owner_of("/nowhere")
keys := acme.keys({"b": 1, "a": 2})
keys_is_set if is_set(keys)
has_a if "a" in keys
described := acme.describe({3, 1, 2})
refused := acme.refuse("no")
clock := acme.clock()
`;

async function evaluate(options: { strict?: boolean } = {}) {
  const built = buildPolicy([{ file: "t.rego", source }], {
    queries: [{ name: "q", query: "x = data.t" }],
    builtins,
    strictBuiltinErrors: options.strict ?? false,
  });
  expect(built.errors).toEqual([]);
  const policy = await loadCompiledPolicy({ wasm: built.wasm!, hostBuiltins: built.hostBuiltins, builtins });
  return policy.evaluate({}, "q");
}

describe("custom builtins in a compiled policy", () => {
  it("are called through the SDK, with results read through their declarations", async () => {
    const [first] = await evaluate();
    expect(first).toEqual({
      x: {
        owner: "alice",
        keys: ["a", "b"],
        keys_is_set: true,
        has_a: true,
        // The set argument arrived as an array in Rego's order; a returned Set is a set.
        described: { isArray: true, items: [1, 2, 3], groups: [0, 1] },
        clock: 42,
      },
    });
  });

  it("make the call undefined when they throw, and fail the evaluation with strict builtin errors", async () => {
    const [first] = await evaluate();
    expect(first).not.toHaveProperty("x.refused");
    await expect(evaluate({ strict: true })).rejects.toThrow(PolicyEvaluationError);
    await expect(evaluate({ strict: true })).rejects.toThrow("eval_builtin_error: acme.refuse: refused: no");
  });

  it("are type-checked at compile time, and a missing one is a compile error naming it", () => {
    const built = buildPolicy(
      [{ file: "t.rego", source: 'package t\np := acme.owner_of(1)\nq := acme.nothing("x")\n' }],
      { queries: [{ name: "q", query: "x = data.t" }], builtins },
    );
    expect(built.errors.map((e) => e.message)).toEqual([
      "t.rego:2:6: rego_type_error: acme.owner_of: invalid argument(s)\n\thave: (number)\n\twant: (string)",
      "t.rego:3:6: rego_type_error: undefined function acme.nothing",
    ]);
    // Without the module, the policy does not know the name at all.
    const without = buildPolicy([{ file: "t.rego", source }], {
      queries: [{ name: "q", query: "x = data.t" }],
    });
    expect(without.errors[0]?.message).toBe("t.rego:3:10: rego_type_error: undefined function acme.owner_of");
  });

  it("are known only to the build given them", () => {
    const built = buildPolicy([{ file: "t.rego", source }], {
      queries: [{ name: "q", query: "x = data.t" }],
      builtins,
    });
    expect(built.customBuiltins.map((d) => d.name)).toEqual([
      "acme.clock",
      "acme.describe",
      "acme.keys",
      "acme.owner_of",
      "acme.refuse",
    ]);
    const later = buildPolicy([{ file: "t.rego", source: "package t\np := acme.clock()\n" }], {
      queries: [{ name: "q", query: "x = data.t" }],
    });
    expect(later.errors.map((e) => e.detail)).toEqual(["undefined function acme.clock"]);
  });

  it("refuse to load a module calling them without them, naming the builtin", async () => {
    const built = buildPolicy([{ file: "t.rego", source: "package t\np := acme.clock()\n" }], {
      queries: [{ name: "q", query: "x = data.t" }],
      builtins,
    });
    await expect(loadCompiledPolicy({ wasm: built.wasm! })).rejects.toThrow(PolicyLoadError);
    await expect(loadCompiledPolicy({ wasm: built.wasm! })).rejects.toThrow(
      /^the policy calls custom builtin acme\.clock, which is not loaded: give the module/,
    );
  });
});

describe("a bundle compiled against custom builtins", () => {
  async function bundle(): Promise<Uint8Array> {
    const built = buildPolicy(
      [{ file: "t.rego", source: "package t\nowner := acme.owner_of(input.path)\n" }],
      {
        entrypoints: ["t/owner"],
        builtins,
      },
    );
    expect(built.errors).toEqual([]);
    return writeBundle({
      wasm: built.wasm!,
      entrypoints: built.entrypoints,
      metadata: { [CUSTOM_BUILTINS_METADATA]: built.customBuiltins },
    });
  }

  it("records their declarations and loads with them", async () => {
    const bytes = await bundle();
    const read = await readBundle(bytes);
    expect(read.manifest.metadata?.[CUSTOM_BUILTINS_METADATA]).toEqual([
      {
        name: "acme.owner_of",
        decl: { type: "function", args: [{ type: "string" }], result: { type: "string" } },
      },
    ]);
    const policy = await loadPolicyFromBundle(bytes, { builtins });
    expect(policy.evaluate({ path: "/srv/db" }, "t/owner")).toEqual([{ result: "bob" }]);
  });

  it("is refused without them, or with another declaration, naming the builtin", async () => {
    const bytes = await bundle();
    await expect(loadPolicyFromBundle(bytes)).rejects.toThrow(
      "the bundle was compiled against custom builtin acme.owner_of, which is not loaded",
    );
    const other = defineCustomBuiltins(
      {
        builtins: [
          {
            name: "acme.owner_of",
            decl: { type: "function", args: [{ type: "number" }], result: { type: "string" } },
            impl: () => "x",
          },
        ],
      },
      "other.mjs",
    );
    await expect(loadPolicyFromBundle(bytes, { builtins: other })).rejects.toThrow(
      /^the bundle was compiled against custom builtin acme\.owner_of declared .*"string".*, but other\.mjs declares it .*"number"/,
    );
  });
});

describe("a custom builtin module", () => {
  const define = (entry: Record<string, unknown>) => () =>
    defineCustomBuiltins({ builtins: [entry] }, "m.mjs");
  const decl = { type: "function", args: [{ type: "string" }], result: { type: "boolean" } };

  it("is refused with a message naming the module and the builtin", () => {
    expect(define({ name: "acme.a", decl, impl: async () => true })).toThrow(
      "m.mjs: acme.a: impl is async, but policies call builtins synchronously",
    );
    expect(define({ name: "count", decl, impl: () => 1 })).toThrow(
      "m.mjs: count is one of OPA's builtins and cannot be redefined",
    );
    expect(
      define({ name: "acme.b", decl: { type: "function", args: [{ type: "text" }] }, impl: () => 1 }),
    ).toThrow(/^m\.mjs: acme\.b: decl\.args\.0: /);
    expect(define({ name: "acme.c", decl, impl: "yes" })).toThrow(
      "m.mjs: acme.c: impl: impl must be a function",
    );
    expect(define({ name: "not a name", decl, impl: () => 1 })).toThrow(CustomBuiltinError);
    expect(() => defineCustomBuiltins({}, "empty.mjs")).toThrow(
      "empty.mjs: builtins: the module must export `builtins`, an array of builtins",
    );
  });

  it("whose implementation returns something JSON cannot hold makes the call fail", async () => {
    const odd = defineCustomBuiltins(
      {
        builtins: [
          {
            name: "acme.odd",
            decl: { type: "function", args: [], result: { type: "any" } },
            impl: () => ({ at: new Date(0) }),
          },
        ],
      },
      "odd.mjs",
    );
    const built = buildPolicy([{ file: "t.rego", source: "package t\np := acme.odd()\n" }], {
      queries: [{ name: "q", query: "x = data.t.p" }],
      builtins: odd,
      strictBuiltinErrors: true,
    });
    const policy = await loadCompiledPolicy({
      wasm: built.wasm!,
      hostBuiltins: built.hostBuiltins,
      builtins: odd,
    });
    expect(() => policy.evaluate({}, "q")).toThrow("acme.odd: result.at is Date, which is not a JSON value");
  });
});

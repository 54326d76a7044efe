import { loadPolicy } from "@open-policy-agent/opa-wasm";
import binaryen from "binaryen";
import { beforeAll, describe, expect, it } from "vitest";
import { EvalContext } from "../../../src/rego/runtime/index.ts";
import { exportedFunction, Wasm, type WasmInstance, type WasmMemory } from "../../../src/rego/wasm/host.ts";
import { ABI_FUNCTION_EXPORTS, ABI_GLOBAL_EXPORTS, Linker } from "../../../src/rego/wasm/index.ts";

const CONSTANT =
  '{"b": [true, null, 1.5e300, 123456789012345678901234567890, -0.5], "a": {3, 1, "z", 2}, "e": {}}';

/**
 * A tiny hand-written "code generator": each entrypoint is a function (ctx) -> () built directly with
 * binaryen, calling runtime functions through the linker's symbols.
 */
function buildPolicy(): Uint8Array {
  const l = new Linker();
  const m = l.module;
  const { i32 } = binaryen;
  const ctx = (): binaryen.ExpressionRef => m.local.get(0, i32);
  const tmp = (): binaryen.ExpressionRef => m.local.get(1, i32);
  const resultIfDefined = (value: binaryen.ExpressionRef): binaryen.ExpressionRef =>
    m.block(null, [m.local.set(1, value), m.if(tmp(), l.call("writ_result_add", [ctx(), tmp()]))]);

  // example/p: input.x
  const x = l.constString("x");
  m.addFunction(
    "g_p",
    i32,
    binaryen.none,
    [i32],
    resultIfDefined(l.call("writ_value_get", [l.call("writ_ctx_input", [ctx()]), m.i32.const(x)])),
  );
  // example/const: a constant object with a set inside
  m.addFunction(
    "g_const",
    i32,
    binaryen.none,
    [],
    l.call("writ_result_add", [ctx(), m.i32.const(l.constValue(CONSTANT, "value"))]),
  );
  // example/echo: input
  m.addFunction(
    "g_echo",
    i32,
    binaryen.none,
    [i32],
    resultIfDefined(m.i32.load(EvalContext.input, 4, ctx(), l.memoryName)),
  );
  // example/roles: data.roles
  const roles = l.constString("roles");
  m.addFunction(
    "g_roles",
    i32,
    binaryen.none,
    [i32],
    resultIfDefined(l.call("writ_value_get", [l.call("writ_ctx_data", [ctx()]), m.i32.const(roles)])),
  );
  // example/conflict: a located runtime error
  const file = l.addUtf8("module.rego");
  const message = l.addUtf8("var assignment conflict");
  m.addFunction(
    "g_conflict",
    i32,
    binaryen.none,
    [],
    l.call("writ_error_at", [
      m.i32.const(file.ptr),
      m.i32.const(file.len),
      m.i32.const(3),
      m.i32.const(1),
      m.i32.const(message.ptr),
      m.i32.const(message.len),
    ]),
  );
  // example/set: {e | e := input[_]} built at runtime, plus an object keyed by the elements
  const elem = (): binaryen.ExpressionRef => m.local.get(3, i32);
  m.addFunction(
    "g_set",
    i32,
    binaryen.none,
    [i32, i32, i32, i32],
    m.block(null, [
      m.local.set(1, m.i32.load(EvalContext.input, 4, ctx(), l.memoryName)),
      m.local.set(2, l.call("writ_set", [])),
      m.local.set(4, m.i32.const(0)),
      m.block("done", [
        m.loop(
          "next",
          m.block(null, [
            m.br("done", m.i32.ge_u(m.local.get(4, i32), l.call("writ_length", [m.local.get(1, i32)]))),
            m.local.set(3, l.call("writ_value_at", [m.local.get(1, i32), m.local.get(4, i32)])),
            l.call("writ_set_add", [m.local.get(2, i32), elem()]),
            m.local.set(4, m.i32.add(m.local.get(4, i32), m.i32.const(1))),
            m.br("next"),
          ]),
        ),
      ]),
      l.call("writ_result_add", [ctx(), m.local.get(2, i32)]),
    ]),
  );
  // example/builtin: custom.wrap(input), a host builtin called during evaluation
  m.addFunction(
    "g_builtin",
    i32,
    binaryen.none,
    [i32],
    resultIfDefined(
      l.call("opa_builtin1", [
        m.i32.const(0),
        m.i32.const(0),
        m.i32.load(EvalContext.input, 4, ctx(), l.memoryName),
      ]),
    ),
  );
  l.defineEntrypoints([
    { name: "example/p", func: "g_p" },
    { name: "example/const", func: "g_const" },
    { name: "example/echo", func: "g_echo" },
    { name: "example/roles", func: "g_roles" },
    { name: "example/conflict", func: "g_conflict" },
    { name: "example/set", func: "g_set" },
    { name: "example/builtin", func: "g_builtin" },
  ]);
  l.defineBuiltins({ "custom.wrap": 0 });
  return l.emit();
}

const customBuiltins = {
  "custom.wrap": (x: unknown): unknown => ({ wrapped: x, seen: JSON.stringify(x) }),
};

/** The SDK's LoadedPolicy internals this test looks at, checked at runtime. */
interface PolicyInternals {
  instance: WasmInstance;
  memory: WasmMemory;
  dataAddr: number;
  dataHeapPtr: number;
  minorVersion: number;
}

function internals(policy: unknown): PolicyInternals {
  if (typeof policy !== "object" || policy === null) throw new Error("not a policy");
  const instance: unknown = Reflect.get(policy, "wasmInstance");
  const memory: unknown = Reflect.get(policy, "mem");
  const dataAddr: unknown = Reflect.get(policy, "dataAddr");
  const dataHeapPtr: unknown = Reflect.get(policy, "dataHeapPtr");
  const minorVersion: unknown = Reflect.get(policy, "minorVersion");
  const exports: unknown =
    typeof instance === "object" && instance !== null ? Reflect.get(instance, "exports") : null;
  const buffer: unknown =
    typeof memory === "object" && memory !== null ? Reflect.get(memory, "buffer") : null;
  if (
    typeof exports !== "object" ||
    exports === null ||
    !(buffer instanceof ArrayBuffer) ||
    typeof dataAddr !== "number" ||
    typeof dataHeapPtr !== "number" ||
    typeof minorVersion !== "number"
  ) {
    throw new Error("unexpected LoadedPolicy shape");
  }
  const grow: unknown = Reflect.get(Object(memory), "grow");
  if (typeof grow !== "function") throw new Error("unexpected memory");
  return {
    instance: { exports: Object.fromEntries(Object.entries(exports)) },
    memory: {
      get buffer(): ArrayBuffer {
        const b: unknown = Reflect.get(Object(memory), "buffer");
        if (!(b instanceof ArrayBuffer)) throw new Error("no buffer");
        return b;
      },
      grow: (pages: number): number => Number(Reflect.apply(grow, memory, [pages])),
    },
    dataAddr,
    dataHeapPtr,
    minorVersion,
  };
}

function cstring(memory: WasmMemory, addr: number): string {
  const bytes = new Uint8Array(memory.buffer);
  let end = addr;
  while (bytes[end] !== 0) end++;
  return new TextDecoder().decode(bytes.subarray(addr, end));
}

/** Calls opa_eval directly (as the SDK does) and returns the raw result text. */
function rawEval(policy: unknown, entrypoint: number, input: string | null, format = 0): string {
  const p = internals(policy);
  const bytes = input === null ? new Uint8Array(0) : new TextEncoder().encode(input);
  const at = p.dataHeapPtr;
  const missing = at + bytes.length - p.memory.buffer.byteLength;
  if (missing > 0) p.memory.grow(Math.ceil(missing / 65536));
  new Uint8Array(p.memory.buffer).set(bytes, at);
  const addr = exportedFunction(p.instance, "opa_eval")(
    0,
    entrypoint,
    p.dataAddr,
    at,
    bytes.length,
    at + bytes.length,
    format,
  );
  return cstring(p.memory, addr);
}

const encode = (text: string): ArrayBuffer => {
  const bytes = new TextEncoder().encode(text);
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
};

let wasm: Uint8Array;
beforeAll(() => {
  wasm = buildPolicy();
});

describe("linked module shape", () => {
  it("imports only what the SDK supplies and exports only the ABI", () => {
    const module = new Wasm.Module(wasm);
    const allowed = new Set([
      "memory",
      "opa_abort",
      "opa_println",
      "opa_builtin0",
      "opa_builtin1",
      "opa_builtin2",
    ]);
    for (const name of ["opa_builtin3", "opa_builtin4"]) allowed.add(name);
    const imports = Wasm.Module.imports(module);
    for (const i of imports) {
      expect(i.module).toBe("env");
      expect(allowed.has(i.name), i.name).toBe(true);
    }
    expect(imports.map((i) => i.name)).toContain("memory");
    const exports = Wasm.Module.exports(module);
    expect(exports.map((e) => e.name).sort()).toEqual(
      [...ABI_FUNCTION_EXPORTS, ...ABI_GLOBAL_EXPORTS, "memory"].sort(),
    );
  });

  it("asks for at most 5 pages of memory and declares no maximum", () => {
    const m = binaryen.readBinary(wasm);
    try {
      const names = [...Array(m.getNumExports()).keys()].map((i) =>
        binaryen.getExportInfo(m.getExportByIndex(i)),
      );
      const memory = names.find((e) => e.name === "memory");
      expect(memory).toBeDefined();
      const info = m.getMemoryInfo(memory?.value);
      expect(info.module).toBe("env");
      expect(info.base).toBe("memory");
      expect(info.initial).toBeLessThanOrEqual(5);
      expect(info.max).toBeUndefined();
      expect(info.shared).toBe(false);
    } finally {
      m.dispose();
    }
  });

  it("is deterministic", () => {
    expect(Buffer.from(buildPolicy()).equals(Buffer.from(wasm))).toBe(true);
  });
});

describe("through the OPA SDK", () => {
  it("loads, lists entrypoints and evaluates object and ArrayBuffer input", async () => {
    const policy = await loadPolicy(wasm, undefined, customBuiltins);
    expect(policy.entrypoints).toEqual({
      "example/p": 0,
      "example/const": 1,
      "example/echo": 2,
      "example/roles": 3,
      "example/conflict": 4,
      "example/set": 5,
      "example/builtin": 6,
    });
    expect(internals(policy).minorVersion).toBeGreaterThanOrEqual(2); // so evaluate() uses opa_eval
    expect(policy.evaluate({ x: { y: [1, "two"] } }, "example/p")).toEqual([{ result: { y: [1, "two"] } }]);
    expect(policy.evaluate({ z: 1 }, "example/p")).toEqual([]);
    expect(policy.evaluate(encode('{"x": false}'), "example/p")).toEqual([{ result: false }]);
    expect(policy.evaluate(undefined, "example/echo")).toEqual([]);
    expect(policy.evaluate({ x: 1 }, 0)).toEqual([{ result: 1 }]);
  });

  it("returns constants containing sets, as JSON and in value format", async () => {
    const policy = await loadPolicy(wasm);
    expect(policy.evaluate(undefined, "example/const")).toEqual([
      {
        result: { a: [1, 2, 3, "z"], b: [true, null, 1.5e300, 1.2345678901234568e29, -0.5], e: {} },
      },
    ]);
    const id = policy.entrypoints["example/const"];
    expect(rawEval(policy, id, null)).toBe(
      '[{"result":{"a":[1,2,3,"z"],"b":[true,null,1.5e300,123456789012345678901234567890,-0.5],"e":{}}}]',
    );
    expect(rawEval(policy, id, null, 1)).toBe(
      '{{"result":{"a":{1,2,3,"z"},"b":[true,null,1.5e300,123456789012345678901234567890,-0.5],"e":{}}}}',
    );
    expect(rawEval(policy, policy.entrypoints["example/echo"], null, 1)).toBe("set()");
    expect(rawEval(policy, policy.entrypoints["example/set"], "[3, 1, 2, 1]", 1)).toBe(
      '{{"result":{1,2,3}}}',
    );
    expect(policy.evaluate([3, "a", 1, 3], "example/set")).toEqual([{ result: [1, 3, "a"] }]);
  });

  it("round-trips nasty inputs exactly", async () => {
    const policy = await loadPolicy(wasm);
    const echo = policy.entrypoints["example/echo"];
    const cases: [string, string][] = [
      ['"\\u00e9\\ud83d\\ude00\\u0000"', '"é😀\\u0000"'],
      ["123456789012345678901234567890", "123456789012345678901234567890"],
      ["1.5e300", "1.5e300"],
      ["-9223372036854775808", "-9223372036854775808"],
      ['[[], {}, [{}], {"a": [[]]}]', '[[],{},[{}],{"a":[[]]}]'],
      ['{"a": 1, "b": 2, "a": 3}', '{"a":3,"b":2}'],
      ['{"b": {"y": 1, "x": 2}, "a": null}', '{"a":null,"b":{"x":2,"y":1}}'],
      ['"\\"quoted\\" \\\\ back\\nslash"', '"\\"quoted\\" \\\\ back\\nslash"'],
    ];
    for (const [input, output] of cases) {
      expect(rawEval(policy, echo, input), input).toBe(`[{"result":${output}}]`);
    }
    const nasty = {
      s: "\u00e9\ud83d\ude00\u2028<>&",
      n: [0, -1, 1.5, 1e-7, 2 ** 53],
      e: [[], {}, [{}]],
      k: { "": 1, " ": 2 },
    };
    expect(policy.evaluate(nasty, "example/echo")).toEqual([{ result: nasty }]);
    expect(policy.evaluate(encode(JSON.stringify(nasty)), "example/echo")).toEqual([{ result: nasty }]);
  });

  it("sees data set with setData", async () => {
    const policy = await loadPolicy(wasm);
    expect(policy.evaluate({}, "example/roles")).toEqual([]);
    policy.setData({ roles: { admin: ["alice"] } });
    expect(policy.evaluate({}, "example/roles")).toEqual([{ result: { admin: ["alice"] } }]);
    policy.setData(encode('{"roles": ["x", "y"]}'));
    expect(policy.evaluate({}, "example/roles")).toEqual([{ result: ["x", "y"] }]);
  });

  it("updates data with opa_value_add_path and opa_value_remove_path", async () => {
    const policy = await loadPolicy(wasm);
    policy.setData({ roles: { admin: ["alice"] } });
    const p = internals(policy);
    const parse = (text: string): number => {
      const bytes = new TextEncoder().encode(text);
      const at = exportedFunction(p.instance, "opa_malloc")(bytes.length);
      new Uint8Array(p.memory.buffer).set(bytes, at);
      return exportedFunction(p.instance, "opa_json_parse")(at, bytes.length);
    };
    exportedFunction(p.instance, "opa_heap_ptr_set")(p.dataHeapPtr);
    const add = exportedFunction(p.instance, "opa_value_add_path");
    expect(add(p.dataAddr, parse('["roles", "viewer"]'), parse('["bob"]'))).toBe(0);
    expect(add(p.dataAddr, parse('["roles", "admin", "x"]'), parse("1"))).toBe(2);
    const remove = exportedFunction(p.instance, "opa_value_remove_path");
    expect(remove(p.dataAddr, parse('["roles", "admin"]'))).toBe(0);
    // Data must stay below the heap pointer the SDK resets to before each evaluation.
    Reflect.set(policy, "dataHeapPtr", exportedFunction(p.instance, "opa_heap_ptr_get")());
    expect(policy.evaluate({}, "example/roles")).toEqual([{ result: { viewer: ["bob"] } }]);
  });

  it("calls host builtins during evaluation (re-entrant JSON marshaling)", async () => {
    const policy = await loadPolicy(wasm, undefined, customBuiltins);
    const input = { a: [1, { b: "c" }], s: "é" };
    expect(policy.evaluate(input, "example/builtin")).toEqual([
      { result: { wrapped: input, seen: JSON.stringify({ a: [1, { b: "c" }], s: "é" }) } },
    ]);
  });

  it("also evaluates through the pre-1.2 path (eval + context functions)", async () => {
    const fast = await loadPolicy(wasm);
    const p = internals(fast);
    // A LoadedPolicy that believes the module is ABI 1.1 uses eval() and the context functions.
    const slow: typeof fast = Reflect.construct(Object.getPrototypeOf(fast).constructor, [
      fast.wasmInstance,
      fast.mem,
      1,
    ]);
    expect(slow.evaluate({ x: [1, 2] }, "example/p")).toEqual([{ result: [1, 2] }]);
    expect(slow.evaluate({}, "example/p")).toEqual([]);
    expect(slow.evaluate(undefined, "example/const")).toEqual(fast.evaluate(undefined, "example/const"));
    const ctx = exportedFunction(p.instance, "opa_eval_ctx_new")();
    exportedFunction(p.instance, "opa_eval_ctx_set_entrypoint")(ctx, 2);
    expect(exportedFunction(p.instance, "eval")(ctx)).toBe(0);
    const rs = exportedFunction(p.instance, "opa_eval_ctx_get_result")(ctx);
    expect(cstring(p.memory, exportedFunction(p.instance, "opa_json_dump")(rs))).toBe("[]");
    expect(cstring(p.memory, exportedFunction(p.instance, "opa_value_dump")(rs))).toBe("set()");
  });

  it("passes abort messages to the caller", async () => {
    const policy = await loadPolicy(wasm);
    const thrown = (f: () => unknown): unknown => {
      try {
        f();
      } catch (e) {
        return e;
      }
      return undefined;
    };
    // The SDK throws the message string itself.
    expect(thrown(() => policy.evaluate({}, "example/conflict"))).toBe(
      "module.rego:3:1: var assignment conflict",
    );
    expect(thrown(() => policy.evaluate({}, 99))).toBe("invalid entrypoint id");
    expect(thrown(() => policy.evaluate(encode('{"x": '), "example/p"))).toBe(
      "invalid input: not a JSON value",
    );
    // The instance stays usable: the next evaluation resets the heap.
    expect(policy.evaluate({ x: 7 }, "example/p")).toEqual([{ result: 7 }]);
  });

  it("handles multi-megabyte input by growing memory", async () => {
    const policy = await loadPolicy(wasm);
    const before = internals(policy).memory.buffer.byteLength;
    const users = Array.from({ length: 80_000 }, (_, i) => ({ id: i, name: `user-${i}`, tags: ["a", "b"] }));
    const input = { x: users.length, users };
    expect(JSON.stringify(input).length).toBeGreaterThan(3_000_000);
    expect(policy.evaluate(input, "example/p")).toEqual([{ result: 80_000 }]);
    expect(policy.evaluate(input, "example/echo")).toEqual([{ result: input }]);
    expect(internals(policy).memory.buffer.byteLength).toBeGreaterThan(before);
  });

  it("reuses the heap across evaluations", async () => {
    const policy = await loadPolicy(wasm);
    const input = { x: 1, items: Array.from({ length: 500 }, (_, i) => ({ i, s: `item ${i}` })) };
    for (let i = 0; i < 20; i++) policy.evaluate(input, "example/echo");
    const settled = internals(policy).memory.buffer.byteLength;
    for (let i = 0; i < 2000; i++) expect(policy.evaluate(input, "example/p")).toEqual([{ result: 1 }]);
    for (let i = 0; i < 200; i++) policy.evaluate(input, "example/echo");
    expect(internals(policy).memory.buffer.byteLength).toBe(settled);
  });
});

describe("linker", () => {
  it("deduplicates constants and places them after the runtime's static data", () => {
    const l = new Linker();
    try {
      const a = l.constString("hello");
      expect(l.constString("hello")).toBe(a);
      expect(a).toBeGreaterThanOrEqual(l.staticBase);
      const n = l.constNumber("123456789012345678901234567890");
      expect(n).toBeGreaterThan(a);
      expect(() => l.constNumber("1.")).toThrow("invalid number literal");
      expect(() => l.constValue("{1}")).toThrow("invalid constant");
      const bytes = l.addUtf8("abc");
      expect(l.addUtf8("abc")).toEqual(bytes);
      expect(l.dataEnd).toBeGreaterThanOrEqual(bytes.ptr + 3);
    } finally {
      l.dispose();
    }
  });

  it("rejects bad entrypoint definitions", () => {
    const l = new Linker();
    try {
      l.module.addFunction("g_nop", binaryen.i32, binaryen.none, [], l.module.nop());
      expect(() =>
        l.defineEntrypoints([
          { name: "a", func: "g_nop" },
          { name: "a", func: "g_nop" },
        ]),
      ).toThrow("duplicate entrypoint");
    } finally {
      l.dispose();
    }
    const empty = new Linker();
    expect(() => empty.emit()).toThrow("no entrypoints defined");
    empty.dispose();
  });

  it("places static data beyond the host's 5 pages when the module is instantiated", async () => {
    const l = new Linker();
    const m = l.module;
    const bytes = new Uint8Array(6 * 65536).fill(7);
    bytes[bytes.length - 1] = 42;
    const at = l.addData(bytes);
    m.addFunction("g_nop", binaryen.i32, binaryen.none, [], m.nop());
    l.defineEntrypoints([{ name: "a", func: "g_nop" }]);
    const wasm = l.emit();
    // The stock SDK call: a memory of 5 pages, which the module grows before copying its data.
    const policy = await loadPolicy(wasm);
    const { memory } = internals(policy);
    expect(memory.buffer.byteLength).toBeGreaterThan(at + bytes.length);
    const placed = new Uint8Array(memory.buffer, at, bytes.length);
    expect(placed[0]).toBe(7);
    expect(placed[bytes.length - 1]).toBe(42);
  });

  it("emits a working module without optimization too", async () => {
    const l = new Linker();
    const m = l.module;
    const value = l.constValue('{"ok": true}');
    m.addFunction(
      "g_ok",
      binaryen.i32,
      binaryen.none,
      [],
      l.call("writ_result_add", [m.local.get(0, binaryen.i32), m.i32.const(value)]),
    );
    l.defineEntrypoints([{ name: "t/ok", func: "g_ok" }]);
    const bytes = l.emit({ optimize: false });
    const policy = await loadPolicy(bytes);
    expect(policy.evaluate({})).toEqual([{ result: { ok: true } }]);
    expect(policy.evaluate({}, "t/ok")).toEqual([{ result: { ok: true } }]);
    expect(() => l.constString("late")).toThrow("already emitted");
  });

  it("finds runtime functions by export name", () => {
    const l = new Linker();
    try {
      expect(l.hasRuntimeFunction("writ_compare")).toBe(true);
      expect(l.hasRuntimeFunction("nope")).toBe(false);
      expect(l.nativeBuiltin("no.such.builtin")).toBeUndefined();
      expect(
        binaryen.getExpressionType(
          l.callDynamic("writ_equal", [l.module.i32.const(0), l.module.i32.const(0)]),
        ),
      ).toBe(binaryen.i32);
      expect(() => l.callDynamic("nope", [])).toThrow("runtime has no function nope");
    } finally {
      l.dispose();
    }
  });

  it("exposes every runtime symbol with its signature", () => {
    const l = new Linker();
    try {
      for (const internal of Object.values(l.symbols)) expect(internal).toBeTruthy();
      const call = l.call("writ_number_int", [l.module.i64.const(1n)]);
      expect(binaryen.getExpressionType(call)).toBe(binaryen.i32);
      expect(binaryen.getExpressionType(l.call("writ_number_to_f64", [l.module.i32.const(0)]))).toBe(
        binaryen.f64,
      );
    } finally {
      l.dispose();
    }
  });
});

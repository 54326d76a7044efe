import { describe, expect, it } from "vitest";
import { buildRuntime } from "../../../src/rego/runtime/build.ts";
import { ABI_VERSION, loadRuntimeBytes } from "../../../src/rego/runtime/index.ts";
import { Wasm } from "../../../src/rego/wasm/host.ts";
import { ABI_FUNCTION_EXPORTS, RUNTIME_FUNCTIONS } from "../../../src/rego/wasm/link.ts";
import { RawRuntime } from "./harness.ts";

describe("runtime build", () => {
  it("rebuilds to exactly the committed runtime.wasm, without AssemblyScript's managed runtime", async () => {
    const { binary, text } = await buildRuntime();
    expect(Buffer.from(binary).equals(Buffer.from(loadRuntimeBytes()))).toBe(true);
    expect(text).not.toContain("~lib/rt");
    expect(text).not.toMatch(/^\s*\(start /m);
  }, 60_000);

  it("imports only the SDK's env functions and the linker placeholders", () => {
    const module = new Wasm.Module(loadRuntimeBytes());
    const imports = Wasm.Module.imports(module).map((i) => `${i.module}.${i.name}`);
    expect(imports.sort()).toEqual(
      [
        "env.memory",
        "env.opa_abort",
        "env.opa_builtin0",
        "env.opa_builtin1",
        "env.opa_builtin2",
        "env.opa_builtin3",
        "env.opa_builtin4",
        "env.opa_println",
        "writ.builtins",
        "writ.entrypoints",
        "writ.eval_ctx",
        "writ.fuel_out",
      ].sort(),
    );
  });

  it("exports the ABI, the internal API and the heap pointer global", () => {
    const exports = new Map(
      Wasm.Module.exports(new Wasm.Module(loadRuntimeBytes())).map((e) => [e.name, e.kind]),
    );
    for (const name of [...ABI_FUNCTION_EXPORTS, ...RUNTIME_FUNCTIONS])
      expect(exports.get(name), name).toBe("function");
    for (const name of ["opa_wasm_abi_version", "opa_wasm_abi_minor_version", "writ_heap_ptr"]) {
      expect(exports.get(name), name).toBe("global");
    }
    expect(exports.get("memory")).toBe("memory");
    expect([...exports.keys()].some((n) => n.startsWith("__"))).toBe(false);
  });

  it("declares ABI 1.3 and starts its heap after its static data", () => {
    const rt = new RawRuntime();
    const global = (name: string): unknown => Reflect.get(Object(rt.instance.exports[name]), "value");
    expect(global("opa_wasm_abi_version")).toBe(ABI_VERSION.major);
    expect(global("opa_wasm_abi_minor_version")).toBe(ABI_VERSION.minor);
    const heap = rt.heap();
    expect(heap % 8).toBe(0);
    expect(heap).toBeGreaterThan(1024);
    expect(heap).toBeLessThan(65536);
  });
});

/**
 * The evaluation budget inside a module: fuel. Every loop iteration, in the runtime
 * (`runtime/build.ts` meters its loops when it builds runtime.wasm) and in the generated code
 * (the code generator's scans), spends one unit of the module's fuel global; when it runs out
 * the module calls `fuel_out`, which the linker defines: it refills the fuel and, in a metered
 * module, calls the host builtin `BUDGET_BUILTIN` (`host/index.ts`), whose host side (`rego/policy.ts`) compares
 * the clock with the evaluation's deadline and throws past it, which unwinds the evaluation.
 *
 * Rego has no recursion and a module's straight-line code is finite, so loops are where an
 * evaluation can spend unbounded time: with every loop metered, the time between two checks of
 * the clock is bounded by FUEL_PER_CHECK iterations (each of bounded cost), whatever the policy.
 * Host builtins (JavaScript) are checked after each call on the host side.
 */
import binaryen from "binaryen";
import { setExportedGlobal, type WasmInstance } from "./host.ts";

/** Loop iterations between two checks of the clock (a check is a host call, about a microsecond). */
export const FUEL_PER_CHECK = 20_000;

/** The export under which runtime.wasm names its fuel global (the linker drops the export). */
export const FUEL_GLOBAL_EXPORT = "writ_fuel";

/** The runtime's placeholder import the linker replaces with the fuel-out function. */
export const FUEL_OUT_IMPORT = { module: "writ", base: "fuel_out" } as const;

type Ref = binaryen.ExpressionRef;

/**
 * The `writ.fuel_out` import for an instance of runtime.wasm itself (the linker's constant
 * layout, tests): no budget, the fuel refilled.
 */
export function refillFuel(instance: () => WasmInstance | undefined): () => void {
  return () => {
    const live = instance();
    if (live !== undefined) setExportedGlobal(live, FUEL_GLOBAL_EXPORT, FUEL_PER_CHECK);
  };
}

/** One unit of fuel spent, and `fuelOut` called when it is gone. */
export function spendFuel(m: binaryen.Module, fuelGlobal: string, fuelOut: string): Ref {
  const i32 = binaryen.i32;
  return m.block(null, [
    m.global.set(fuelGlobal, m.i32.sub(m.global.get(fuelGlobal, i32), m.i32.const(1))),
    m.if(m.i32.lt_s(m.global.get(fuelGlobal, i32), m.i32.const(0)), m.call(fuelOut, [], binaryen.none)),
  ]);
}

/** `body` preceded by one unit of fuel spent: a loop's body, metered. */
export function meteredBody(m: binaryen.Module, fuelGlobal: string, fuelOut: string, body: Ref): Ref {
  return m.block(null, [spendFuel(m, fuelGlobal, fuelOut), body], binaryen.getExpressionType(body));
}

/**
 * Meters every loop of the module's defined functions (imports have no body). Throws on an
 * expression kind it does not know, so that a runtime built by a newer compiler is never left
 * with an unmetered loop.
 */
export function meterLoops(m: binaryen.Module, fuelGlobal: string, fuelOut: string): number {
  const loops: Ref[] = [];
  const visit = (e: Ref): void => {
    if (e === 0) return;
    const id = binaryen.getExpressionId(e);
    const children = CHILDREN.get(id);
    if (children === undefined) throw new Error(`cannot meter a module with expression id ${id}`);
    if (id === binaryen.LoopId) loops.push(e);
    for (const child of children(e)) visit(child);
  };
  for (let i = 0; i < m.getNumFunctions(); i++) {
    const info = binaryen.getFunctionInfo(m.getFunctionByIndex(i));
    if (info.module === "" && info.body !== 0) visit(info.body);
  }
  for (const loop of loops) setLoopBody(loop, meteredBody(m, fuelGlobal, fuelOut, loopBody(loop)));
  return loops.length;
}

// binaryen.js's expression classes (`binaryen.Block.getChildren`, …) are missing from its type
// declarations: each accessor is looked up once and checked to be a function.
function accessor(cls: string, method: string): (e: Ref, ...rest: number[]) => unknown {
  const holder: unknown = Reflect.get(binaryen, cls);
  const fn: unknown =
    (typeof holder === "object" || typeof holder === "function") && holder !== null
      ? Reflect.get(holder, method)
      : undefined;
  if (typeof fn !== "function") throw new Error(`binaryen.js lacks ${cls}.${method}`);
  return (e, ...rest) => Reflect.apply(fn, holder, [e, ...rest]);
}

function refs(value: unknown): Ref[] {
  if (typeof value === "number") return [value];
  if (Array.isArray(value)) return value.filter((v): v is number => typeof v === "number");
  return [];
}

/** An expression kind's children, by its accessors (one or several getters). */
function childrenOf(cls: string, getters: readonly string[]): (e: Ref) => Ref[] {
  const fns = getters.map((g) => accessor(cls, g));
  return (e) => fns.flatMap((fn) => refs(fn(e)));
}

const leaf = (): Ref[] => [];

const CHILDREN = new Map<number, (e: Ref) => Ref[]>([
  [binaryen.BlockId, childrenOf("Block", ["getChildren"])],
  [binaryen.IfId, childrenOf("If", ["getCondition", "getIfTrue", "getIfFalse"])],
  [binaryen.LoopId, childrenOf("Loop", ["getBody"])],
  [binaryen.BreakId, childrenOf("Break", ["getCondition", "getValue"])],
  [binaryen.SwitchId, childrenOf("Switch", ["getCondition", "getValue"])],
  [binaryen.CallId, childrenOf("Call", ["getOperands"])],
  [binaryen.CallIndirectId, childrenOf("CallIndirect", ["getTarget", "getOperands"])],
  [binaryen.LocalSetId, childrenOf("LocalSet", ["getValue"])],
  [binaryen.GlobalSetId, childrenOf("GlobalSet", ["getValue"])],
  [binaryen.LoadId, childrenOf("Load", ["getPtr"])],
  [binaryen.StoreId, childrenOf("Store", ["getPtr", "getValue"])],
  [binaryen.UnaryId, childrenOf("Unary", ["getValue"])],
  [binaryen.BinaryId, childrenOf("Binary", ["getLeft", "getRight"])],
  [binaryen.SelectId, childrenOf("Select", ["getIfTrue", "getIfFalse", "getCondition"])],
  [binaryen.DropId, childrenOf("Drop", ["getValue"])],
  [binaryen.ReturnId, childrenOf("Return", ["getValue"])],
  [binaryen.MemoryGrowId, childrenOf("MemoryGrow", ["getDelta"])],
  [binaryen.MemoryCopyId, childrenOf("MemoryCopy", ["getDest", "getSource", "getSize"])],
  [binaryen.MemoryFillId, childrenOf("MemoryFill", ["getDest", "getValue", "getSize"])],
  [binaryen.MemoryInitId, childrenOf("MemoryInit", ["getDest", "getOffset", "getSize"])],
  [binaryen.LocalGetId, leaf],
  [binaryen.GlobalGetId, leaf],
  [binaryen.ConstId, leaf],
  [binaryen.NopId, leaf],
  [binaryen.UnreachableId, leaf],
  [binaryen.MemorySizeId, leaf],
  [binaryen.DataDropId, leaf],
]);

const getLoopBody = accessor("Loop", "getBody");
const setLoopBodyFn = accessor("Loop", "setBody");

function loopBody(loop: Ref): Ref {
  const [body] = refs(getLoopBody(loop));
  if (body === undefined) throw new Error("a loop without a body");
  return body;
}

function setLoopBody(loop: Ref, body: Ref): void {
  setLoopBodyFn(loop, body);
}

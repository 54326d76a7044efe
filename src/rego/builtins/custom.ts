/**
 * Custom builtins: functions a deployment adds to Rego, as OPA users register Go builtins
 * (`rego.RegisterBuiltinN` with a `types.NewFunction` declaration; OPA's docs, "Extensions").
 *
 * A custom builtin module is an ES module that exports `builtins`, an array of
 *
 * ```js
 * { name: "acme.owner_of",                       // dotted, like OPA's builtin names
 *   decl: { type: "function", args: [{ type: "string" }], result: { type: "string" } },
 *   nondeterministic: false,                     // optional: true for time, randomness, I/O
 *   impl: (path) => owners[path] }               // synchronous
 * ```
 *
 * `decl` is the shape of a declaration in OPA's capabilities file (`v1/types` marshalled).
 * Implementations are synchronous: the policy module calls them from inside WebAssembly through
 * the SDK's host builtins, which cannot wait; an `async` function is refused when the module is
 * loaded, and a returned promise is an error of the call.
 *
 * Values cross as JSON, as the SDK's host builtins see them: a set argument arrives as an array
 * (its elements in Rego's order), an object as a plain object. The result is read back through
 * the declared result type: an array where the declaration says `set` becomes a set (at any
 * depth), and a JavaScript `Set` is always a set; `undefined` makes the call undefined. A thrown
 * error follows OPA: the call is undefined, or with strict builtin errors the evaluation fails
 * with `<name>: <message>`.
 *
 * A build looks custom builtins up only inside {@link withCustomBuiltins} (catalog.ts), so two
 * gateways or tests in one process may hold different sets.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import {
  makeArray,
  makeBoolean,
  makeSet,
  makeString,
  NULL,
  numberFromBigInt,
  numberFromFloat,
  ObjectValue,
  toJSON,
  type Value,
} from "../plan/value.ts";
import { declarations } from "./declarations.ts";
import { type BuiltinDef, BuiltinError, builtinDef } from "./registry.ts";
import type { BuiltinDeclaration, BuiltinSpec, FunctionDecl, OpaType } from "./types.ts";

/** A custom builtin module, or its declarations, that cannot be used. */
export class CustomBuiltinError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CustomBuiltinError";
  }
}

const opaTypeSchema: z.ZodType<OpaType> = z.lazy(() =>
  z.union([
    z.strictObject({
      type: z.literal("any"),
      of: z.union([z.array(opaTypeSchema), opaTypeSchema]).optional(),
    }),
    z.strictObject({ type: z.enum(["null", "boolean", "number", "string"]) }),
    z.strictObject({
      type: z.literal("array"),
      static: z.array(opaTypeSchema).optional(),
      dynamic: opaTypeSchema.optional(),
    }),
    z.strictObject({ type: z.literal("set"), of: opaTypeSchema.optional() }),
    z.strictObject({
      type: z.literal("object"),
      static: z.array(z.strictObject({ key: z.unknown(), value: opaTypeSchema })).optional(),
      dynamic: z.strictObject({ key: opaTypeSchema, value: opaTypeSchema }).optional(),
    }),
    z.strictObject({
      type: z.literal("function"),
      args: z.array(opaTypeSchema).optional(),
      result: opaTypeSchema.optional(),
      variadic: opaTypeSchema.optional(),
    }),
  ]),
);

/** Host calls pass at most four arguments (the SDK's `opa_builtin0..4`). */
const MAX_ARGS = 4;

const functionDeclSchema: z.ZodType<FunctionDecl> = z.strictObject({
  type: z.literal("function"),
  args: z
    .array(opaTypeSchema)
    .max(MAX_ARGS, `a custom builtin takes at most ${MAX_ARGS} arguments`)
    .optional(),
  result: opaTypeSchema.optional(),
  variadic: opaTypeSchema.optional(),
});

const NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** A declaration as a module or a bundle's manifest writes it (an OPA capabilities entry). */
export const customDeclarationSchema = z.object({
  name: z.string().regex(NAME, "a builtin name is dotted identifiers, e.g. acme.owner_of"),
  decl: functionDeclSchema,
  nondeterministic: z.boolean().optional(),
});

const entrySchema = customDeclarationSchema.extend({
  impl: z.custom<(...args: unknown[]) => unknown>((f) => typeof f === "function", {
    message: "impl must be a function",
  }),
});

const moduleSchema = z.object({
  builtins: z.array(z.unknown(), { error: "the module must export `builtins`, an array of builtins" }),
});

/** One custom builtin: its declaration and where it came from. */
export interface CustomBuiltin {
  readonly declaration: BuiltinDeclaration;
  readonly spec: BuiltinSpec;
  readonly def: BuiltinDef;
  /** The module that defines it. */
  readonly source: string;
}

/** A set of custom builtins, by name. */
export class CustomBuiltins {
  private readonly byName = new Map<string, CustomBuiltin>();

  constructor(
    builtins: Iterable<CustomBuiltin> = [],
    /**
     * The modules (absolute paths) they were imported from, when they were: a policy evaluator
     * thread imports the same to call them (src/policy/evaluator.ts).
     */
    readonly modules: readonly string[] = [],
  ) {
    for (const b of builtins) {
      const other = this.byName.get(b.declaration.name);
      if (other) {
        throw new CustomBuiltinError(
          `${b.source}: builtin ${b.declaration.name} is also defined by ${other.source}: keep one`,
        );
      }
      this.byName.set(b.declaration.name, b);
    }
  }

  get(name: string): CustomBuiltin | undefined {
    return this.byName.get(name);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  get size(): number {
    return this.byName.size;
  }

  /** The declarations, sorted by name. */
  declarations(): BuiltinDeclaration[] {
    return [...this.byName.values()]
      .map((b) => b.declaration)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * What a compiled module depends on (its host imports and type checks): the declarations,
   * not the implementations. Part of the compiled-policy cache's key.
   */
  fingerprint(): string {
    return JSON.stringify(this.declarations());
  }
}

const standardNames = new Set(declarations.map((d) => d.name));

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  const at = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  return `${at}${issue.message}`;
}

function isAsyncFunction(f: (...args: unknown[]) => unknown): boolean {
  return f.constructor.name === "AsyncFunction" || f.constructor.name === "AsyncGeneratorFunction";
}

/** The custom builtins a module's `builtins` export defines; `source` names it in errors. */
export function defineCustomBuiltins(exported: unknown, source: string): CustomBuiltins {
  const module = moduleSchema.safeParse(exported);
  if (!module.success) throw new CustomBuiltinError(`${source}: ${describeIssue(module.error)}`);
  const out: CustomBuiltin[] = [];
  module.data.builtins.forEach((raw, i) => {
    const rawName: unknown = typeof raw === "object" && raw !== null ? Reflect.get(raw, "name") : undefined;
    const label = typeof rawName === "string" ? rawName : `builtins[${i}]`;
    const parsed = entrySchema.safeParse(raw);
    if (!parsed.success) throw new CustomBuiltinError(`${source}: ${label}: ${describeIssue(parsed.error)}`);
    const { name, decl, nondeterministic, impl } = parsed.data;
    if (standardNames.has(name)) {
      throw new CustomBuiltinError(
        `${source}: ${name} is one of OPA's builtins and cannot be redefined: give yours another name`,
      );
    }
    if (decl.variadic !== undefined) {
      throw new CustomBuiltinError(
        `${source}: ${name}: custom builtins take a fixed list of arguments (args)`,
      );
    }
    if (isAsyncFunction(impl)) {
      throw new CustomBuiltinError(
        `${source}: ${name}: impl is async, but policies call builtins synchronously from inside the policy module: return the value itself`,
      );
    }
    const declaration: BuiltinDeclaration = {
      name,
      decl: { type: "function", args: decl.args ?? [], result: decl.result ?? { type: "any" } },
      ...(nondeterministic ? { nondeterministic: true } : {}),
    };
    const def = customDef(declaration, impl);
    out.push({
      declaration,
      def,
      source,
      spec: {
        name,
        arity: declaration.decl.args?.length ?? 0,
        implementation: "custom",
        declaration,
        ...(nondeterministic ? { nondeterministic: true } : {}),
      },
    });
  });
  return new CustomBuiltins(out);
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Imports custom builtin modules (paths relative to `base`, default the working folder). */
export async function loadCustomBuiltins(
  files: readonly string[],
  base: string = process.cwd(),
): Promise<CustomBuiltins> {
  const all: CustomBuiltin[] = [];
  const modules: string[] = [];
  for (const file of files) {
    const absolute = path.resolve(base, file);
    modules.push(absolute);
    let exported: unknown;
    try {
      exported = await import(pathToFileURL(absolute).href);
    } catch (error) {
      throw new CustomBuiltinError(`cannot load custom builtins from ${file}: ${reason(error)}`);
    }
    const set = defineCustomBuiltins(exported, file);
    for (const d of set.declarations()) {
      const b = set.get(d.name);
      if (b) all.push(b);
    }
  }
  return new CustomBuiltins(all, modules);
}

// ------------------------------------------------------------------------------- conversions

/** The alternatives a declared type allows (`any<a, b>` → a, b; plain `any` → none known). */
function alternatives(t: OpaType | undefined): OpaType[] {
  if (t === undefined) return [];
  if (t.type !== "any") return [t];
  if (t.of === undefined) return [];
  return (Array.isArray(t.of) ? t.of : [t.of]).flatMap(alternatives);
}

function pick(t: OpaType | undefined, kinds: readonly string[]): OpaType | undefined {
  return alternatives(t).find((a) => kinds.includes(a.type));
}

function describe(x: unknown): string {
  if (x === undefined) return "undefined";
  if (typeof x === "number") return String(x);
  if (typeof x === "object" && x !== null) return x.constructor?.name ?? "object";
  return typeof x;
}

/**
 * A JavaScript value returned by a custom builtin, as a Rego value, read through `declared`:
 * an array declared as a set becomes a set. Throws {@link BuiltinError} for what JSON cannot hold.
 */
export function valueFromHost(x: unknown, declared: OpaType | undefined, at = "result"): Value {
  if (x === null) return NULL;
  switch (typeof x) {
    case "boolean":
      return makeBoolean(x);
    case "string":
      return makeString(x);
    case "bigint":
      return numberFromBigInt(x);
    case "number":
      if (!Number.isFinite(x)) return badResult(at, x);
      return numberFromFloat(x);
    case "object":
      break;
    default:
      return badResult(at, x);
  }
  if (x instanceof Set) {
    const t = pick(declared, ["set"]);
    return makeSet(
      [...x].map((e, i) => valueFromHost(e, t?.type === "set" ? t.of : undefined, `${at}[${i}]`)),
    );
  }
  if (Array.isArray(x)) {
    const t = pick(declared, ["array", "set"]);
    if (t?.type === "set" && !pick(declared, ["array"])) {
      return makeSet(x.map((e, i) => valueFromHost(e, t.of, `${at}[${i}]`)));
    }
    const a = t?.type === "array" ? t : undefined;
    return makeArray(x.map((e, i) => valueFromHost(e, a?.static?.[i] ?? a?.dynamic, `${at}[${i}]`)));
  }
  const proto: unknown = Object.getPrototypeOf(x);
  if (proto !== Object.prototype && proto !== null) return badResult(at, x);
  const t = pick(declared, ["object"]);
  const o = t?.type === "object" ? t : undefined;
  const obj = new ObjectValue();
  for (const [k, v] of Object.entries(x)) {
    if (v === undefined) continue;
    const fixed = o?.static?.find((s) => s.key === k)?.value;
    obj.set(makeString(k), valueFromHost(v, fixed ?? o?.dynamic?.value, `${at}.${k}`));
  }
  return obj;
}

function badResult(at: string, x: unknown): never {
  throw new BuiltinError(
    "eval_builtin_error",
    `${at} is ${describe(x)}, which is not a JSON value (return null, booleans, finite numbers, strings, arrays, Sets or plain objects)`,
  );
}

function isThenable(x: unknown): boolean {
  return typeof x === "object" && x !== null && typeof Reflect.get(x, "then") === "function";
}

/** The registry entry of a custom builtin: JSON in, the declared result type out, OPA's errors. */
function customDef(declaration: BuiltinDeclaration, impl: (...args: unknown[]) => unknown): BuiltinDef {
  const { name } = declaration;
  const arity = declaration.decl.args?.length ?? 0;
  const call = (args: readonly Value[]): Value | undefined => {
    let result: unknown;
    try {
      result = impl(...args.map(toJSON));
    } catch (error) {
      throw new BuiltinError("eval_builtin_error", reason(error));
    }
    if (isThenable(result)) {
      throw new BuiltinError(
        "eval_builtin_error",
        "returned a promise, but builtins run synchronously: return the value itself",
      );
    }
    return result === undefined ? undefined : valueFromHost(result, declaration.decl.result);
  };
  return builtinDef(name, arity, call);
}

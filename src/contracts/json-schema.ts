/**
 * JSON Schema (draft 2020-12) through Ajv: compiling the schemas of contracts once, and turning
 * validation errors into readable violations with JSON Pointers into the checked value.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { Ajv as AjvDraft07, type Options } from "ajv/dist/ajv.js";
import addFormats from "ajv-formats";
import { escapeToken, unescapeToken } from "../core/json-pointer.ts";
import { MCP_HEADER_KEYWORD } from "./mcp-headers.ts";
import { isNormalPath, PATH_FORMAT, RELATIVE_KEYWORD, ROOT_KEYWORD } from "./paths.ts";

/** One way a value fails a schema. */
export interface SchemaViolation {
  /** JSON Pointer into the checked value (`/path`; `""` for the value itself). */
  pointer: string;
  message: string;
}

/** A schema that cannot be compiled, with the pointer of the problem inside the schema. */
export class SchemaCompileError extends Error {
  constructor(
    readonly pointer: string,
    message: string,
  ) {
    super(message);
    this.name = "SchemaCompileError";
  }
}

const draft2020 = "https://json-schema.org/draft/2020-12/schema";
const draft07 = "http://json-schema.org/draft-07/schema";

/**
 * Ajv's options for one registry: all errors reported, no type coercion, no defaults written into
 * the arguments, unknown keywords and formats refused (a misspelt `requried` would otherwise let
 * everything through).
 */
const options: Options = {
  allErrors: true,
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
  strictSchema: true,
  strictNumbers: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  validateFormats: true,
  logger: false,
};

/**
 * Writ's own path declaration is known to every dialect: `format: path` (a string in the normal
 * form src/normalize/path.ts gives, since arguments are checked once normalized) and the
 * annotations `x-writ-root` and `x-writ-relative` (src/contracts/paths.ts checks them); so is
 * MCP's annotation `x-mcp-header` (src/contracts/mcp-headers.ts checks where it is).
 */
function withWritVocabulary<A extends Ajv2020 | AjvDraft07>(ajv: A): A {
  addFormats.default(ajv);
  ajv.addFormat(PATH_FORMAT, { type: "string", validate: isNormalPath });
  ajv.addVocabulary([ROOT_KEYWORD, RELATIVE_KEYWORD, MCP_HEADER_KEYWORD]);
  return ajv;
}

/**
 * The JSON Schema compilers of one registry. A schema is draft 2020-12 unless it declares draft-07
 * in `$schema`, as MCP servers built on zod 3 do (MCP's default dialect is 2020-12, and a server
 * may declare another): an imported tool's schema is then checked as its server means it, not
 * rewritten. The draft-07 compiler is built only when a schema asks for it.
 */
export class SchemaCompiler {
  readonly draft2020 = withWritVocabulary(new Ajv2020(options));
  #draft07: AjvDraft07 | undefined;

  get draft07(): AjvDraft07 {
    this.#draft07 ??= withWritVocabulary(new AjvDraft07(options));
    return this.#draft07;
  }
}

export function createSchemaCompiler(): SchemaCompiler {
  return new SchemaCompiler();
}

/** Compiles `schema`; throws `SchemaCompileError` naming what is wrong and where. */
export function compileSchema(compiler: SchemaCompiler, schema: Record<string, unknown>): ValidateFunction {
  const declared = schema.$schema;
  const is = (uri: string) => declared === uri || declared === `${uri}#`;
  if (declared !== undefined && !is(draft2020) && !is(draft07)) {
    throw new SchemaCompileError(
      "/$schema",
      `Writ reads JSON Schema draft 2020-12 (and draft-07 when $schema says so), not ${JSON.stringify(declared)}; remove $schema or set it to ${draft2020}`,
    );
  }
  const ajv = is(draft07) ? compiler.draft07 : compiler.draft2020;
  if (!ajv.validateSchema(schema)) {
    const [first] = ajv.errors ?? [];
    const pointer = first?.instancePath ?? "";
    throw new SchemaCompileError(
      pointer,
      `not a valid JSON Schema: ${first?.message ?? "rejected by the meta-schema"}`,
    );
  }
  try {
    return ajv.compile(schema);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new SchemaCompileError("", `cannot compile the schema: ${reason}`);
  }
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number" && Number.isInteger(value)) return "integer";
  return typeof value;
}

function valueAt(root: unknown, pointer: string): unknown {
  let current = root;
  for (const token of pointer.split("/").slice(1)) {
    const key = unescapeToken(token);
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, key)) return undefined;
    current = Reflect.get(current, key);
  }
  return current;
}

function stringParam(error: ErrorObject, name: string): string | undefined {
  const value: unknown = Reflect.get(error.params, name);
  return typeof value === "string" ? value : undefined;
}

/** One violation per Ajv error, pointing at the offending field (a missing or extra field itself). */
export function violationsOf(errors: readonly ErrorObject[], value: unknown): SchemaViolation[] {
  return errors.map((error) => {
    const at = error.instancePath;
    switch (error.keyword) {
      case "required": {
        const missing = stringParam(error, "missingProperty") ?? "";
        return { pointer: `${at}/${escapeToken(missing)}`, message: "is required" };
      }
      case "additionalProperties": {
        const extra = stringParam(error, "additionalProperty") ?? "";
        return {
          pointer: `${at}/${escapeToken(extra)}`,
          message: "is not a field the schema allows; remove it",
        };
      }
      case "unevaluatedProperties": {
        const extra = stringParam(error, "unevaluatedProperty") ?? "";
        return {
          pointer: `${at}/${escapeToken(extra)}`,
          message: "is not a field the schema allows; remove it",
        };
      }
      case "type":
        return {
          pointer: at,
          message: `${error.message ?? "has the wrong type"}, got ${describeType(valueAt(value, at))}`,
        };
      case "enum": {
        const allowed: unknown = Reflect.get(error.params, "allowedValues");
        const list = Array.isArray(allowed) ? allowed.map((item) => JSON.stringify(item)).join(", ") : "";
        return { pointer: at, message: `must be one of ${list}` };
      }
      case "const":
        return {
          pointer: at,
          message: `must be ${JSON.stringify(Reflect.get(error.params, "allowedValue"))}`,
        };
      default:
        return { pointer: at, message: error.message ?? `fails the ${error.keyword} rule` };
    }
  });
}

export type { ValidateFunction };

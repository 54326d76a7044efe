/**
 * JSON Schema (draft 2020-12) through Ajv: compiling the schemas of contracts once, and turning
 * validation errors into readable violations with JSON Pointers into the checked value.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
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

/**
 * An Ajv instance for one registry: all errors reported, no type coercion, no defaults written into
 * the arguments, unknown keywords and formats refused (a misspelt `requried` would otherwise let
 * everything through). Writ's own path declaration is known: `format: path` (a string in the
 * normal form src/normalize/path.ts gives, since arguments are checked once normalized) and the
 * annotations `x-writ-root` and `x-writ-relative` (src/contracts/paths.ts checks them).
 */
export function createSchemaCompiler(): Ajv2020 {
  const ajv = new Ajv2020({
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
  });
  addFormats.default(ajv);
  ajv.addFormat(PATH_FORMAT, { type: "string", validate: isNormalPath });
  ajv.addVocabulary([ROOT_KEYWORD, RELATIVE_KEYWORD]);
  return ajv;
}

function escapeToken(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** Compiles `schema`; throws `SchemaCompileError` naming what is wrong and where. */
export function compileSchema(ajv: Ajv2020, schema: Record<string, unknown>): ValidateFunction {
  const declared = schema.$schema;
  if (declared !== undefined && declared !== draft2020 && declared !== `${draft2020}#`) {
    throw new SchemaCompileError(
      "/$schema",
      `Writ reads JSON Schema draft 2020-12, not ${JSON.stringify(declared)}; remove $schema or set it to ${draft2020}`,
    );
  }
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
    const key = token.replaceAll("~1", "/").replaceAll("~0", "~");
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

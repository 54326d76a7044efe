/**
 * `json.verify_schema` and `json.match_schema` (OPA's `v1/topdown/jsonschema.go`). OPA validates
 * with gojsonschema (drafts 4, 6 and 7); here Ajv does the validation (draft-07 with draft-06's
 * meta-schema added; draft-04 schemas are read as draft-06 after rewriting their boolean
 * `exclusiveMinimum`/`exclusiveMaximum`), and its errors are reported in gojsonschema's shape:
 * `{error, type, field, desc}` with gojsonschema's error types and descriptions.
 * Compiled schemas are cached by their canonical JSON text.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import draft06 from "ajv/dist/refs/json-schema-draft-06.json" with { type: "json" };
import addFormats from "ajv-formats";
import {
  JSONSyntaxError,
  makeArray,
  makeBoolean,
  makeObject,
  NULL,
  parseJSON,
  toJSONText,
  type Value,
} from "../../plan/value.ts";
import { fail, str } from "../registry.ts";

const PRIMITIVE_TYPES = ["array", "boolean", "integer", "number", "null", "object", "string"];

class SchemaError extends Error {}

let ajvInstance: Ajv | undefined;

function ajv(): Ajv {
  if (!ajvInstance) {
    ajvInstance = new Ajv({
      allErrors: true,
      verbose: true,
      strict: false,
      logger: false,
      validateSchema: true,
    });
    addFormats.default(ajvInstance);
    ajvInstance.addMetaSchema(draft06);
  }
  return ajvInstance;
}

/** Plain JSON data of a schema or document operand (OPA's `astValueToJSONSchemaLoader`). */
function loadOperand(v: Value): unknown {
  if (v.type === "string") {
    let parsed: Value;
    try {
      parsed = parseJSON(v.value);
    } catch (e) {
      if (e instanceof JSONSyntaxError) throw new SchemaError("invalid JSON string");
      throw e;
    }
    return JSON.parse(toJSONText(parsed));
  }
  if (v.type === "object" || v.type === "array") return JSON.parse(toJSONText(v));
  throw new SchemaError("wrong type, expected string or object");
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

const DRAFT04 = /^https?:\/\/json-schema\.org\/draft-04\/schema#?$/;

/** gojsonschema's own checks of `type`, with its messages. */
function checkTypes(schema: unknown): void {
  if (Array.isArray(schema)) {
    for (const s of schema) checkTypes(s);
    return;
  }
  if (!isRecord(schema)) return;
  const t = schema.type;
  const types = typeof t === "string" ? [t] : Array.isArray(t) ? t : [];
  for (const x of types) {
    if (typeof x === "string" && !PRIMITIVE_TYPES.includes(x))
      throw new SchemaError(
        `has a primitive type that is NOT VALID -- given: /${x}/ Expected valid values are:[${PRIMITIVE_TYPES.join(" ")}]`,
      );
  }
  for (const [k, v] of Object.entries(schema)) if (k !== "enum" && k !== "const") checkTypes(v);
}

/** A draft-04 schema rewritten for Ajv: boolean exclusive bounds become numeric ones. */
function fromDraft04(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(fromDraft04);
  if (!isRecord(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === "$schema") out[k] = "http://json-schema.org/draft-06/schema#";
    else if (k === "id" && typeof v === "string") out.$id = v;
    else if (k === "exclusiveMinimum" || k === "exclusiveMaximum") {
      if (typeof v !== "boolean") out[k] = v;
    } else if (k === "enum" || k === "const") out[k] = v;
    else out[k] = fromDraft04(v);
  }
  if (schema.exclusiveMinimum === true && typeof schema.minimum === "number") {
    out.exclusiveMinimum = schema.minimum;
    delete out.minimum;
  }
  if (schema.exclusiveMaximum === true && typeof schema.maximum === "number") {
    out.exclusiveMaximum = schema.maximum;
    delete out.maximum;
  }
  return out;
}

/**
 * gojsonschema accepts `"enum": []` (nothing matches); Ajv refuses it, so an empty enum is given
 * one member that no JSON document can equal, left out of the error's description.
 */
const NO_VALUE = { "\u0000writ": "empty enum" };
const NO_VALUE_TEXT = JSON.stringify(NO_VALUE);

function fillEmptyEnums(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(fillEmptyEnums);
  if (!isRecord(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === "enum" && Array.isArray(v) && v.length === 0) out[k] = [NO_VALUE];
    else if (k === "enum" || k === "const") out[k] = v;
    else out[k] = fillEmptyEnums(v);
  }
  return out;
}

const cache = new Map<string, ValidateFunction>();
const CACHE_LIMIT = 256;

/** Compiles a schema (cached by its canonical text); throws {@link SchemaError}. */
function compile(schemaOperand: Value): ValidateFunction {
  let schema = loadOperand(schemaOperand);
  const key = JSON.stringify(schema);
  const cached = cache.get(key);
  if (cached) return cached;
  checkTypes(schema);
  if (isRecord(schema) && typeof schema.$schema === "string" && DRAFT04.test(schema.$schema))
    schema = fromDraft04(schema);
  schema = fillEmptyEnums(schema);
  if (typeof schema !== "boolean" && !isRecord(schema)) throw new SchemaError("schema must be an object");
  const a = ajv();
  let validate: ValidateFunction;
  try {
    if (!a.validateSchema(schema)) throw new SchemaError(describeSchemaErrors(a.errors ?? []));
    validate = a.compile(schema);
  } catch (e) {
    if (e instanceof SchemaError) throw e;
    throw new SchemaError(e instanceof Error ? e.message : String(e));
  } finally {
    // Schemas with an `$id` are registered by Ajv; keep the instance free of them.
    if (isRecord(schema) && typeof schema.$id === "string") a.removeSchema(schema.$id);
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, validate);
  return validate;
}

function describeSchemaErrors(errors: readonly ErrorObject[]): string {
  const e = errors[0];
  if (!e) return "invalid schema";
  const at = e.instancePath === "" ? "" : `${e.instancePath.slice(1).replaceAll("/", ".")} `;
  return `${at}${e.message ?? "is invalid"}`;
}

// ------------------------------------------------------------------------------------ errors

/** gojsonschema's context text for an Ajv instance path: `(root).a.0.b`. */
function contextOf(instancePath: string): string {
  if (instancePath === "") return "(root)";
  const parts = instancePath
    .slice(1)
    .split("/")
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"));
  return ["(root)", ...parts].join(".");
}

function fieldOf(context: string): string {
  return context.startsWith("(root).") ? context.slice("(root).".length) : context;
}

function jsonTypeOf(x: unknown): string {
  if (x === null) return "null";
  if (Array.isArray(x)) return "array";
  if (typeof x === "number") return Number.isInteger(x) ? "integer" : "number";
  return typeof x;
}

function text(x: unknown): string {
  return typeof x === "string" ? x : JSON.stringify(x);
}

interface GoSchemaError {
  type: string;
  description: string;
}

/** The gojsonschema error type and description of an Ajv error, or undefined to leave it out. */
function translate(e: ErrorObject, field: string): GoSchemaError | undefined {
  const p: Record<string, unknown> = e.params;
  switch (e.keyword) {
    case "type": {
      const types = Array.isArray(p.type) ? p.type : String(p.type).split(",");
      const expected = types.length === 1 ? String(types[0]) : `[${types.join(",")}]`;
      return {
        type: "invalid_type",
        description: `Invalid type. Expected: ${expected}, given: ${jsonTypeOf(e.data)}`,
      };
    }
    case "required":
      return { type: "required", description: `${text(p.missingProperty)} is required` };
    case "enum": {
      const allowed = Array.isArray(p.allowedValues)
        ? p.allowedValues
            .map((x) => JSON.stringify(x))
            .filter((x) => x !== NO_VALUE_TEXT)
            .join(", ")
        : "";
      return { type: "enum", description: `${field} must be one of the following: ${allowed}` };
    }
    case "const":
      return { type: "const", description: `${field} does not match: ${JSON.stringify(p.allowedValue)}` };
    case "minItems":
      return { type: "array_min_items", description: `Array must have at least ${text(p.limit)} items` };
    case "maxItems":
      return { type: "array_max_items", description: `Array must have at most ${text(p.limit)} items` };
    case "uniqueItems":
      return { type: "unique", description: `array items[${text(p.j)},${text(p.i)}] must be unique` };
    case "minLength":
      return {
        type: "string_gte",
        description: `String length must be greater than or equal to ${text(p.limit)}`,
      };
    case "maxLength":
      return {
        type: "string_lte",
        description: `String length must be less than or equal to ${text(p.limit)}`,
      };
    case "pattern":
      return { type: "pattern", description: `Does not match pattern '${text(p.pattern)}'` };
    case "format":
      return { type: "format", description: `Does not match format '${text(p.format)}'` };
    case "minimum":
      return { type: "number_gte", description: `Must be greater than or equal to ${text(p.limit)}` };
    case "exclusiveMinimum":
      return { type: "number_gt", description: `Must be greater than ${text(p.limit)}` };
    case "maximum":
      return { type: "number_lte", description: `Must be less than or equal to ${text(p.limit)}` };
    case "exclusiveMaximum":
      return { type: "number_lt", description: `Must be less than ${text(p.limit)}` };
    case "multipleOf":
      return { type: "multiple_of", description: `Must be a multiple of ${text(p.multipleOf)}` };
    case "additionalProperties":
      return {
        type: "additional_property_not_allowed",
        description: `Additional property ${text(p.additionalProperty)} is not allowed`,
      };
    case "additionalItems":
      return { type: "array_no_additional_items", description: "No additional items allowed on array" };
    case "anyOf":
      return { type: "number_any_of", description: "Must validate at least one schema (anyOf)" };
    case "oneOf":
      return { type: "number_one_of", description: "Must validate one and only one schema (oneOf)" };
    case "not":
      return { type: "number_not", description: "Must not validate the schema (not)" };
    case "if":
      return p.failingKeyword === "else"
        ? { type: "condition_else", description: 'Must validate "else" as "if" was not valid' }
        : { type: "condition_then", description: 'Must validate "then" as "if" was valid' };
    case "minProperties":
      return { type: "array_min_properties", description: `Must have at least ${text(p.limit)} properties` };
    case "maxProperties":
      return { type: "array_max_properties", description: `Must have at most ${text(p.limit)} properties` };
    case "dependencies":
    case "dependentRequired":
      return { type: "missing_dependency", description: `Has a dependency on ${text(p.property)}` };
    case "contains":
      return { type: "contains", description: "At least one of the items must match" };
    case "false schema":
      return { type: "false", description: "False always fails validation" };
    case "propertyNames":
      return {
        type: "invalid_property_name",
        description: `Property "${text(p.propertyName)}" does not match pattern`,
      };
    default:
      return { type: e.keyword, description: e.message ?? "is invalid" };
  }
}

function resultErrors(errors: readonly ErrorObject[]): Value {
  const out: Value[] = [];
  for (const e of errors) {
    const context = contextOf(e.instancePath);
    const field = fieldOf(context);
    const t = translate(e, field);
    if (!t) continue;
    out.push(
      makeObject([
        [str("error"), str(`${field}: ${t.description}`)],
        [str("type"), str(t.type)],
        [str("field"), str(field)],
        [str("desc"), str(t.description)],
      ]),
    );
  }
  return makeArray(out);
}

// ------------------------------------------------------------------------------------ builtins

/** `json.verify_schema`: `[true, null]`, or `[false, "jsonschema: <why>"]`. */
export function verifySchema(schema: Value): Value {
  try {
    compile(schema);
    return makeArray([makeBoolean(true), NULL]);
  } catch (e) {
    if (e instanceof SchemaError) return makeArray([makeBoolean(false), str(`jsonschema: ${e.message}`)]);
    throw e;
  }
}

/** `json.match_schema`: `[valid, errors]`; a builtin error when either operand cannot be loaded. */
export function matchSchema(document: Value, schema: Value): Value {
  try {
    const data = loadOperand(document);
    const validate = compile(schema);
    const valid = validate(data);
    return makeArray([makeBoolean(valid), valid ? makeArray([]) : resultErrors(validate.errors ?? [])]);
  } catch (e) {
    if (e instanceof SchemaError) return fail(e.message);
    throw e;
  }
}

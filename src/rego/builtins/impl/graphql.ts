/**
 * The `graphql.*` builtins (`v1/topdown/graphql.go`). OPA parses with gqlparser and returns its
 * AST run through JSON (Go struct field names: `Operations`, `SelectionSet`, `Alias`, `Kind`,
 * `Raw`, …), pruned of `Position`, nulls and empty arrays/objects. Here `graphql` (graphql-js)
 * parses and validates, and its AST is rewritten into gqlparser's shapes. An AST object given
 * as input (as OPA accepts) is printed back to GraphQL text and parsed again.
 *
 * Differences from gqlparser kept small: gqlparser accepts an empty document (graphql-js does
 * not), and its query documents hold only executable definitions, its schema documents only
 * type-system ones; both are enforced here. Error messages come from graphql-js, in OPA's
 * `<message> in GraphQL string at location <line>:<column>` frame.
 */
import {
  buildASTSchema,
  type ConstDirectiveNode,
  type DefinitionNode,
  type DirectiveNode,
  type DocumentNode,
  type FieldDefinitionNode,
  GraphQLError,
  type GraphQLSchema,
  type InputValueDefinitionNode,
  Kind,
  Lexer,
  type OperationTypeDefinitionNode,
  parse,
  type SelectionSetNode,
  Source,
  TokenKind,
  type TypeNode,
  type ValueNode,
  type VariableDefinitionNode,
  validate,
  validateSchema,
} from "graphql";
import {
  makeArray,
  makeBoolean,
  makeObject,
  makeString,
  numberFromBigInt,
  toJSON,
  type Value,
} from "../../plan/value.ts";
import { arg, BuiltinError, define, fail, stringArg, typeError } from "../registry.ts";

// ------------------------------------------------------------------------------------ gqlparser shapes

type Json = null | boolean | number | string | Json[] | { [key: string]: Json | undefined };
type JsonObject = { [key: string]: Json | undefined };

/** gqlparser's `ValueKind`. */
const VALUE_KIND: Record<ValueNode["kind"], number> = {
  Variable: 0,
  IntValue: 1,
  FloatValue: 2,
  StringValue: 3,
  BooleanValue: 5,
  NullValue: 6,
  EnumValue: 7,
  ListValue: 8,
  ObjectValue: 9,
};

function valueJSON(v: ValueNode): JsonObject {
  const base = { ExpectedTypeHasDefault: false };
  switch (v.kind) {
    case "Variable":
      return { Raw: v.name.value, Kind: 0, ...base };
    case "IntValue":
    case "FloatValue":
      return { Raw: v.value, Kind: VALUE_KIND[v.kind], ...base };
    case "StringValue":
      return { Raw: v.value, Kind: v.block ? 4 : 3, ...base };
    case "BooleanValue":
      return { Raw: String(v.value), Kind: 5, ...base };
    case "NullValue":
      return { Raw: "null", Kind: 6, ...base };
    case "EnumValue":
      return { Raw: v.value, Kind: 7, ...base };
    case "ListValue":
      return {
        Raw: "",
        Children: v.values.map((x) => ({ Name: "", Value: valueJSON(x) })),
        Kind: 8,
        ...base,
      };
    case "ObjectValue":
      return {
        Raw: "",
        Children: v.fields.map((f) => ({ Name: f.name.value, Value: valueJSON(f.value) })),
        Kind: 9,
        ...base,
      };
  }
  // graphql's Kind is an enum: the switch covers every value node, which TypeScript cannot see.
  throw new Error(`unexpected GraphQL value node ${String((v as { kind: unknown }).kind)}`);
}

function typeJSON(t: TypeNode): JsonObject {
  switch (t.kind) {
    case "NamedType":
      return { NamedType: t.name.value, NonNull: false };
    case "ListType":
      return { NamedType: "", Elem: typeJSON(t.type), NonNull: false };
    case "NonNullType":
      return { ...typeJSON(t.type), NonNull: true };
  }
  throw new Error(`unexpected GraphQL type node ${String((t as { kind: unknown }).kind)}`);
}

function directivesJSON(ds: readonly (DirectiveNode | ConstDirectiveNode)[] | undefined): Json[] {
  return (ds ?? []).map((d) => ({
    Name: d.name.value,
    Arguments: (d.arguments ?? []).map((a) => ({ Name: a.name.value, Value: valueJSON(a.value) })),
    Location: "",
  }));
}

function selectionSetJSON(s: SelectionSetNode | undefined): Json[] {
  return (s?.selections ?? []).map((sel): Json => {
    if (sel.kind === "Field")
      return {
        Alias: sel.alias?.value ?? sel.name.value,
        Name: sel.name.value,
        Arguments: (sel.arguments ?? []).map((a) => ({ Name: a.name.value, Value: valueJSON(a.value) })),
        Directives: directivesJSON(sel.directives),
        SelectionSet: selectionSetJSON(sel.selectionSet),
      };
    if (sel.kind === "FragmentSpread")
      return { Name: sel.name.value, Directives: directivesJSON(sel.directives) };
    return {
      TypeCondition: sel.typeCondition?.name.value ?? "",
      Directives: directivesJSON(sel.directives),
      SelectionSet: selectionSetJSON(sel.selectionSet),
    };
  });
}

function variablesJSON(vs: readonly VariableDefinitionNode[] | undefined): Json[] {
  return (vs ?? []).map((v) => ({
    Variable: v.variable.name.value,
    Type: typeJSON(v.type),
    DefaultValue: v.defaultValue ? valueJSON(v.defaultValue) : null,
    Directives: directivesJSON(v.directives),
    Used: false,
  }));
}

function queryJSON(doc: DocumentNode): JsonObject {
  const operations: Json[] = [];
  const fragments: Json[] = [];
  for (const d of doc.definitions) {
    if (d.kind === "OperationDefinition")
      operations.push({
        Operation: d.operation,
        Name: d.name?.value ?? "",
        VariableDefinitions: variablesJSON(d.variableDefinitions),
        Directives: directivesJSON(d.directives),
        SelectionSet: selectionSetJSON(d.selectionSet),
      });
    else if (d.kind === "FragmentDefinition")
      fragments.push({
        Name: d.name.value,
        VariableDefinition: variablesJSON(d.variableDefinitions),
        TypeCondition: d.typeCondition.name.value,
        Directives: directivesJSON(d.directives),
        SelectionSet: selectionSetJSON(d.selectionSet),
      });
  }
  return { Operations: operations, Fragments: fragments };
}

function inputValueJSON(a: InputValueDefinitionNode): JsonObject {
  return {
    Description: a.description?.value ?? "",
    Name: a.name.value,
    DefaultValue: a.defaultValue ? valueJSON(a.defaultValue) : null,
    Type: typeJSON(a.type),
    Directives: directivesJSON(a.directives),
  };
}

function fieldJSON(f: FieldDefinitionNode): JsonObject {
  return {
    Description: f.description?.value ?? "",
    Name: f.name.value,
    Arguments: (f.arguments ?? []).map(inputValueJSON),
    Type: typeJSON(f.type),
    Directives: directivesJSON(f.directives),
  };
}

function operationTypesJSON(ops: readonly OperationTypeDefinitionNode[] | undefined): Json[] {
  return (ops ?? []).map((o) => ({ Operation: o.operation, Type: o.type.name.value }));
}

/** A type definition or extension as gqlparser's `Definition`. */
function definitionJSON(d: DefinitionNode): JsonObject | undefined {
  const common = (
    kind: string,
    name: string,
    description: string | undefined,
    ds: readonly ConstDirectiveNode[] | undefined,
  ) => ({
    Kind: kind,
    Description: description ?? "",
    Name: name,
    Directives: directivesJSON(ds),
    BuiltIn: false,
  });
  switch (d.kind) {
    case "ScalarTypeDefinition":
    case "ScalarTypeExtension":
      return common(
        "SCALAR",
        d.name.value,
        "description" in d ? d.description?.value : undefined,
        d.directives,
      );
    case "ObjectTypeDefinition":
    case "ObjectTypeExtension":
    case "InterfaceTypeDefinition":
    case "InterfaceTypeExtension":
      return {
        ...common(
          d.kind.startsWith("Object") ? "OBJECT" : "INTERFACE",
          d.name.value,
          "description" in d ? d.description?.value : undefined,
          d.directives,
        ),
        Interfaces: (d.interfaces ?? []).map((i) => i.name.value),
        Fields: (d.fields ?? []).map(fieldJSON),
      };
    case "UnionTypeDefinition":
    case "UnionTypeExtension":
      return {
        ...common("UNION", d.name.value, "description" in d ? d.description?.value : undefined, d.directives),
        Types: (d.types ?? []).map((t) => t.name.value),
      };
    case "EnumTypeDefinition":
    case "EnumTypeExtension":
      return {
        ...common("ENUM", d.name.value, "description" in d ? d.description?.value : undefined, d.directives),
        EnumValues: (d.values ?? []).map((e) => ({
          Description: e.description?.value ?? "",
          Name: e.name.value,
          Directives: directivesJSON(e.directives),
        })),
      };
    case "InputObjectTypeDefinition":
    case "InputObjectTypeExtension":
      return {
        ...common(
          "INPUT_OBJECT",
          d.name.value,
          "description" in d ? d.description?.value : undefined,
          d.directives,
        ),
        Fields: (d.fields ?? []).map(inputValueJSON),
      };
    default:
      return undefined;
  }
}

function schemaJSON(doc: DocumentNode): JsonObject {
  const out: { [k: string]: Json[] } = {
    Schema: [],
    SchemaExtension: [],
    Directives: [],
    Definitions: [],
    Extensions: [],
  };
  for (const d of doc.definitions) {
    if (d.kind === "SchemaDefinition")
      out.Schema?.push({
        Description: d.description?.value ?? "",
        Directives: directivesJSON(d.directives),
        OperationTypes: operationTypesJSON(d.operationTypes),
      });
    else if (d.kind === "SchemaExtension")
      out.SchemaExtension?.push({
        Description: "",
        Directives: directivesJSON(d.directives),
        OperationTypes: operationTypesJSON(d.operationTypes),
      });
    else if (d.kind === "DirectiveDefinition")
      out.Directives?.push({
        Description: d.description?.value ?? "",
        Name: d.name.value,
        Arguments: (d.arguments ?? []).map(inputValueJSON),
        Locations: d.locations.map((l) => l.value),
        IsRepeatable: d.repeatable,
      });
    else {
      const def = definitionJSON(d);
      if (def) (d.kind.endsWith("Extension") ? out.Extensions : out.Definitions)?.push(def);
    }
  }
  return out;
}

/** Kept by pruning: anything but nulls, empty arrays and empty objects. */
function relevant(v: Value | undefined): v is Value {
  return !(
    v === undefined ||
    (v.type === "array" && v.items.length === 0) ||
    (v.type === "object" && v.size === 0)
  );
}

/** OPA's `pruneIrrelevantGraphQLASTNodes`: drops `Position`, nulls, and empty arrays and objects. */
function prune(x: Json): Value | undefined {
  if (x === null) return undefined;
  if (Array.isArray(x)) {
    const items: Value[] = [];
    for (const item of x) {
      const v = prune(item);
      if (!relevant(v)) continue;
      items.push(v);
    }
    return makeArray(items);
  }
  if (typeof x === "object") {
    const obj = makeObject();
    for (const [k, item] of Object.entries(x)) {
      if (k === "Position" || item === undefined) continue;
      const v = prune(item);
      if (!relevant(v)) continue;
      obj.set(makeString(k), v);
    }
    return obj;
  }
  if (typeof x === "number") return numberFromBigInt(BigInt(x));
  if (typeof x === "boolean") return makeBoolean(x);
  return makeString(x);
}

function pruned(x: JsonObject): Value {
  return prune(x) ?? makeObject();
}

// ------------------------------------------------------------------------------------ parsing

/** A parse or validation failure with gqlparser's position (`line:column`). */
class GraphQLFailure extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

/** graphql-js's message without its `Syntax Error: ` prefix and final period (gqlparser's style). */
function plainMessage(e: GraphQLError): string {
  const message = e.message.replace(/^Syntax Error: /, "").replace(/\.$/, "");
  // gqlparser names only the kind of the token found where another was expected.
  return message.replace(/^(Expected .*, found [A-Za-z]+) ".*"$/, "$1");
}

function failureOf(e: unknown): GraphQLFailure {
  if (e instanceof GraphQLFailure) return e;
  if (e instanceof GraphQLError) {
    const loc = e.locations?.[0];
    return new GraphQLFailure(plainMessage(e), loc?.line ?? 0, loc?.column ?? 0);
  }
  throw e;
}

/** Whether the source holds no tokens (gqlparser parses it as an empty document). */
function isEmptySource(text: string): boolean {
  const lexer = new Lexer(new Source(text));
  return lexer.advance().kind === TokenKind.EOF;
}

const EMPTY_DOCUMENT: DocumentNode = { kind: Kind.DOCUMENT, definitions: [] };

function parseDocument(text: string, executable: boolean): DocumentNode {
  if (isEmptySource(text)) return EMPTY_DOCUMENT;
  const doc = (() => {
    try {
      return parse(text, { noLocation: false });
    } catch (e) {
      throw failureOf(e);
    }
  })();
  for (const d of doc.definitions) {
    const isExecutable = d.kind === "OperationDefinition" || d.kind === "FragmentDefinition";
    if (isExecutable !== executable) {
      const tok = d.loc?.startToken;
      const desc = tok?.value !== undefined ? `${tok.kind} "${tok.value}"` : (tok?.kind ?? "");
      throw new GraphQLFailure(`Unexpected ${desc}`, tok?.line ?? 0, tok?.column ?? 0);
    }
  }
  return doc;
}

/** OPA's `parseQuery`/`parseSchema` error text. */
function parseFailure(e: GraphQLFailure): never {
  return fail(`${e.message} in GraphQL string at location ${e.line}:${e.column}`);
}

/** `convertSchema`: the schema document merged with the built-in definitions, validated. */
function buildSchema(doc: DocumentNode): GraphQLSchema {
  let schema: GraphQLSchema;
  try {
    schema = buildASTSchema(doc);
  } catch (e) {
    // buildASTSchema reports invalid SDL as a plain Error joining the messages (no locations).
    const f =
      e instanceof Error && !(e instanceof GraphQLError)
        ? new GraphQLFailure((e.message.split("\n\n")[0] ?? "").replace(/\.$/, ""), 0, 0)
        : failureOf(e);
    throw new GraphQLFailure(
      `Error in gqlparser SchemaDocument to Schema conversion: input:${f.line}:${f.column}: ${f.message}`,
      f.line,
      f.column,
    );
  }
  // gqlparser accepts a schema without a query type (an empty one is valid); queries against it fail.
  const errors = validateSchema(schema).filter((e) => !/^Query root type must be provided/.test(e.message));
  const first = errors[0];
  if (first) {
    const f = failureOf(first);
    throw new GraphQLFailure(
      `Error in gqlparser SchemaDocument to Schema conversion: input:${f.line}:${f.column}: ${f.message}`,
      f.line,
      f.column,
    );
  }
  return schema;
}

/** `validateQuery`: the first validation error, in OPA's frame. */
function validateQuery(schema: GraphQLSchema, doc: DocumentNode): string | undefined {
  if (doc.definitions.length === 0) return undefined;
  if (!schema.getQueryType())
    return doc.definitions.some((d) => d.kind === "OperationDefinition" && d.operation === "query")
      ? 'Schema does not support operation type "query" in GraphQL query string at location 1:1'
      : undefined;
  const errors = validate(schema, doc);
  const first = errors[0];
  if (!first) return undefined;
  const f = failureOf(first);
  return `${f.message} in GraphQL query string at location ${f.line}:${f.column}`;
}

// ------------------------------------------------------------------------------------ AST objects as input

function isObj(x: unknown): x is Record<string, unknown> {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}

function list(x: unknown): unknown[] {
  return Array.isArray(x) ? x : [];
}

function text(x: unknown): string {
  return typeof x === "string" ? x : "";
}

function printValue(v: unknown): string {
  if (!isObj(v)) return "null";
  const raw = text(v.Raw);
  const children = list(v.Children).filter(isObj);
  switch (v.Kind) {
    case 0:
      return `$${raw}`;
    case 3:
    case 4:
      return JSON.stringify(raw);
    case 8:
      return `[${children.map((c) => printValue(c.Value)).join(", ")}]`;
    case 9:
      return `{${children.map((c) => `${text(c.Name)}: ${printValue(c.Value)}`).join(", ")}}`;
    default:
      return raw === "" ? "null" : raw;
  }
}

function printType(t: unknown): string {
  if (!isObj(t)) return "";
  const inner = isObj(t.Elem) ? `[${printType(t.Elem)}]` : text(t.NamedType);
  return t.NonNull === true ? `${inner}!` : inner;
}

function printArguments(args: unknown): string {
  const as = list(args).filter(isObj);
  return as.length ? `(${as.map((a) => `${text(a.Name)}: ${printValue(a.Value)}`).join(", ")})` : "";
}

function printDirectives(ds: unknown): string {
  return list(ds)
    .filter(isObj)
    .map((d) => ` @${text(d.Name)}${printArguments(d.Arguments)}`)
    .join("");
}

function printSelectionSet(s: unknown): string {
  const sels = list(s).filter(isObj);
  if (sels.length === 0) return "";
  const parts = sels.map((sel) => {
    if ("TypeCondition" in sel) {
      const cond = text(sel.TypeCondition);
      return `...${cond ? ` on ${cond}` : ""}${printDirectives(sel.Directives)} ${printSelectionSet(sel.SelectionSet)}`;
    }
    if ("Alias" in sel || "Arguments" in sel || "SelectionSet" in sel) {
      const name = text(sel.Name);
      const alias = text(sel.Alias);
      return `${alias && alias !== name ? `${alias}: ` : ""}${name}${printArguments(sel.Arguments)}${printDirectives(sel.Directives)} ${printSelectionSet(sel.SelectionSet)}`;
    }
    return `...${text(sel.Name)}${printDirectives(sel.Directives)}`;
  });
  return `{ ${parts.join(" ")} }`;
}

function printVariables(vs: unknown): string {
  const defs = list(vs).filter(isObj);
  if (defs.length === 0) return "";
  return `(${defs
    .map(
      (v) =>
        `$${text(v.Variable)}: ${printType(v.Type)}${isObj(v.DefaultValue) ? ` = ${printValue(v.DefaultValue)}` : ""}${printDirectives(v.Directives)}`,
    )
    .join(", ")})`;
}

/** gqlparser's `QueryDocument` (as JSON) printed as GraphQL. */
function printQuery(doc: Record<string, unknown>): string {
  const ops = list(doc.Operations)
    .filter(isObj)
    .map(
      (op) =>
        `${text(op.Operation) || "query"} ${text(op.Name)}${printVariables(op.VariableDefinitions)}${printDirectives(op.Directives)} ${printSelectionSet(op.SelectionSet)}`,
    );
  const frags = list(doc.Fragments)
    .filter(isObj)
    .map(
      (f) =>
        `fragment ${text(f.Name)}${printVariables(f.VariableDefinition)} on ${text(f.TypeCondition)}${printDirectives(f.Directives)} ${printSelectionSet(f.SelectionSet)}`,
    );
  return [...ops, ...frags].join("\n");
}

function printDescription(d: unknown): string {
  const s = text(d);
  return s ? `${JSON.stringify(s)} ` : "";
}

function printInputValue(a: Record<string, unknown>): string {
  const def = isObj(a.DefaultValue) ? ` = ${printValue(a.DefaultValue)}` : "";
  return `${printDescription(a.Description)}${text(a.Name)}: ${printType(a.Type)}${def}${printDirectives(a.Directives)}`;
}

function printArgumentDefinitions(args: unknown): string {
  const as = list(args).filter(isObj);
  return as.length ? `(${as.map(printInputValue).join(", ")})` : "";
}

function printDefinition(d: Record<string, unknown>, extend: boolean): string {
  const head = `${extend ? "extend " : printDescription(d.Description)}`;
  const name = text(d.Name);
  const dirs = printDirectives(d.Directives);
  const fields = (input: boolean) => {
    const fs = list(d.Fields).filter(isObj);
    if (fs.length === 0) return "";
    return ` { ${fs
      .map((f) =>
        input
          ? printInputValue(f)
          : `${printDescription(f.Description)}${text(f.Name)}${printArgumentDefinitions(f.Arguments)}: ${printType(f.Type)}${printDirectives(f.Directives)}`,
      )
      .join(" ")} }`;
  };
  const interfaces = list(d.Interfaces).map(text);
  const impl = interfaces.length ? ` implements ${interfaces.join(" & ")}` : "";
  switch (d.Kind) {
    case "SCALAR":
      return `${head}scalar ${name}${dirs}`;
    case "OBJECT":
      return `${head}type ${name}${impl}${dirs}${fields(false)}`;
    case "INTERFACE":
      return `${head}interface ${name}${impl}${dirs}${fields(false)}`;
    case "UNION": {
      const types = list(d.Types).map(text);
      return `${head}union ${name}${dirs}${types.length ? ` = ${types.join(" | ")}` : ""}`;
    }
    case "ENUM": {
      const values = list(d.EnumValues).filter(isObj);
      const body = values.map(
        (e) => `${printDescription(e.Description)}${text(e.Name)}${printDirectives(e.Directives)}`,
      );
      return `${head}enum ${name}${dirs}${values.length ? ` { ${body.join(" ")} }` : ""}`;
    }
    case "INPUT_OBJECT":
      return `${head}input ${name}${dirs}${fields(true)}`;
    default:
      return "";
  }
}

/** gqlparser's `SchemaDocument` (as JSON) printed as GraphQL SDL. */
function printSchema(doc: Record<string, unknown>): string {
  const out: string[] = [];
  const schemaDef = (s: Record<string, unknown>, extend: boolean) => {
    const ops = list(s.OperationTypes)
      .filter(isObj)
      .map((o) => `${text(o.Operation)}: ${text(o.Type)}`);
    return `${extend ? "extend " : printDescription(s.Description)}schema${printDirectives(s.Directives)}${ops.length ? ` { ${ops.join(" ")} }` : ""}`;
  };
  for (const s of list(doc.Schema).filter(isObj)) out.push(schemaDef(s, false));
  for (const s of list(doc.SchemaExtension).filter(isObj)) out.push(schemaDef(s, true));
  for (const d of list(doc.Directives).filter(isObj)) {
    const locations = list(d.Locations).map(text).join(" | ");
    out.push(
      `${printDescription(d.Description)}directive @${text(d.Name)}${printArgumentDefinitions(d.Arguments)}${d.IsRepeatable === true ? " repeatable" : ""} on ${locations}`,
    );
  }
  for (const d of list(doc.Definitions).filter(isObj)) out.push(printDefinition(d, false));
  for (const d of list(doc.Extensions).filter(isObj)) out.push(printDefinition(d, true));
  return out.join("\n");
}

// ------------------------------------------------------------------------------------ builtins

/** A query operand: GraphQL text, or gqlparser's AST object. */
function queryDocument(v: Value): DocumentNode {
  if (v.type === "string") return parseDocument(v.value, true);
  const json = toJSON(v);
  return parseDocument(isObj(json) ? printQuery(json) : "", true);
}

function schemaDocument(v: Value): DocumentNode {
  if (v.type === "string") return parseDocument(v.value, false);
  const json = toJSON(v);
  return parseDocument(isObj(json) ? printSchema(json) : "", false);
}

interface Verified {
  query: Value;
  schema: Value;
}

/** Parses both operands and validates the query against the schema; throws GraphQLFailure or a message. */
function parseAndVerify(q: Value, s: Value): Verified | { error: string } {
  let queryDoc: DocumentNode;
  let schemaDoc: DocumentNode;
  try {
    queryDoc = queryDocument(q);
    schemaDoc = schemaDocument(s);
  } catch (e) {
    const f = failureOf(e);
    return { error: `${f.message} in GraphQL string at location ${f.line}:${f.column}` };
  }
  let schema: GraphQLSchema;
  try {
    schema = buildSchema(schemaDoc);
  } catch (e) {
    return { error: failureOf(e).message };
  }
  const error = validateQuery(schema, queryDoc);
  if (error) return { error };
  return { query: pruned(queryJSON(queryDoc)), schema: pruned(schemaJSON(schemaDoc)) };
}

function isQueryOrSchema(v: Value): boolean {
  return v.type === "string" || v.type === "object";
}

define("graphql.parse", (args) => {
  const q = arg(args, 0);
  const s = arg(args, 1);
  if (!isQueryOrSchema(q)) return typeError(0, q, "string", "object");
  if (!isQueryOrSchema(s)) return typeError(1, s, "string", "object");
  const r = parseAndVerify(q, s);
  if ("error" in r) return fail(r.error);
  return makeArray([r.query, r.schema]);
});

define("graphql.parse_and_verify", (args) => {
  const q = arg(args, 0);
  const s = arg(args, 1);
  const unverified = makeArray([makeBoolean(false), makeObject(), makeObject()]);
  if (!isQueryOrSchema(q) || !isQueryOrSchema(s)) return unverified;
  const r = parseAndVerify(q, s);
  if ("error" in r) return unverified;
  return makeArray([makeBoolean(true), r.query, r.schema]);
});

define("graphql.is_valid", (args) => {
  const q = arg(args, 0);
  const s = arg(args, 1);
  if (!isQueryOrSchema(q) || !isQueryOrSchema(s)) return makeBoolean(false);
  return makeBoolean(!("error" in parseAndVerify(q, s)));
});

/** A query or schema document as gqlparser's AST, or the parse failure OPA raises. */
function parsedAs(text: string, query: boolean): Value {
  try {
    const document = parseDocument(text, query);
    return pruned(query ? queryJSON(document) : schemaJSON(document));
  } catch (e) {
    return parseFailure(failureOf(e));
  }
}

define("graphql.parse_query", (args) => parsedAs(stringArg(args, 0), true));
define("graphql.parse_schema", (args) => parsedAs(stringArg(args, 0), false));

define("graphql.schema_is_valid", (args) => {
  const s = arg(args, 0);
  if (!isQueryOrSchema(s)) return makeBoolean(false);
  try {
    buildSchema(schemaDocument(s));
    return makeBoolean(true);
  } catch (e) {
    if (e instanceof BuiltinError) throw e;
    failureOf(e);
    return makeBoolean(false);
  }
});

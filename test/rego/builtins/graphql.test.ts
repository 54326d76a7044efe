import { describe, expect, it } from "vitest";
import { call, errorOf, evalRego } from "./helpers-net.ts";

const schema = `
  type Employee { id: String! salary: Int! }
  schema { query: Query }
  type Query { employeeByID(id: String!): Employee }`;
const query = `{ employeeByID(id: "alice") { salary } }`;

// OPA's own expected ASTs (v1/topdown/graphql_test.go).
const queryAST = {
  Operations: [
    {
      Name: "",
      Operation: "query",
      SelectionSet: [
        {
          Alias: "employeeByID",
          Arguments: [{ Name: "id", Value: { ExpectedTypeHasDefault: false, Kind: 3, Raw: "alice" } }],
          Name: "employeeByID",
          SelectionSet: [{ Alias: "salary", Name: "salary" }],
        },
      ],
    },
  ],
};
const schemaAST = {
  Definitions: [
    {
      BuiltIn: false,
      Description: "",
      Fields: [
        { Description: "", Name: "id", Type: { NamedType: "String", NonNull: true } },
        { Description: "", Name: "salary", Type: { NamedType: "Int", NonNull: true } },
      ],
      Kind: "OBJECT",
      Name: "Employee",
    },
    {
      BuiltIn: false,
      Description: "",
      Fields: [
        {
          Arguments: [{ Description: "", Name: "id", Type: { NamedType: "String", NonNull: true } }],
          Description: "",
          Name: "employeeByID",
          Type: { NamedType: "Employee", NonNull: false },
        },
      ],
      Kind: "OBJECT",
      Name: "Query",
    },
  ],
  Schema: [{ Description: "", OperationTypes: [{ Operation: "query", Type: "Query" }] }],
};

describe("graphql", () => {
  it("returns gqlparser's AST shapes, pruned as OPA does", () => {
    expect(call("graphql.parse", query, schema)).toEqual([queryAST, schemaAST]);
    expect(call("graphql.parse_query", query)).toEqual(queryAST);
    expect(call("graphql.parse_schema", schema)).toEqual(schemaAST);
    expect(call("graphql.parse_and_verify", query, schema)).toEqual([true, queryAST, schemaAST]);
    expect(call("graphql.parse_and_verify", "", schema)).toEqual([true, {}, schemaAST]);
  });

  it("validates queries against schemas", () => {
    expect(call("graphql.is_valid", query, schema)).toBe(true);
    expect(call("graphql.is_valid", `{ employeeByID(id: "bob") }`, schema)).toBe(false);
    expect(call("graphql.is_valid", `{ nope }`, schema)).toBe(false);
    expect(call("graphql.is_valid", 1, schema)).toBe(false);
    expect(call("graphql.parse_and_verify", query, "")).toEqual([false, {}, {}]);
    expect(call("graphql.schema_is_valid", "")).toBe(true);
    expect(call("graphql.schema_is_valid", schema)).toBe(true);
    expect(call("graphql.schema_is_valid", "type Broken {\n fixme\n\ntype Query { a: Int }")).toBe(false);
    expect(call("graphql.schema_is_valid", "type Query { a: Missing }")).toBe(false);
    expect(errorOf("graphql.parse_query", "type Query { a: Int }")).toBe(
      'eval_builtin_error: graphql.parse_query: Unexpected Name "type" in GraphQL string at location 1:1',
    );
    expect(errorOf("graphql.parse_schema", "type Query { a: Int }\n{ a }")).toBe(
      "eval_builtin_error: graphql.parse_schema: Unexpected { in GraphQL string at location 2:1",
    );
  });

  it("accepts AST objects in place of text", () => {
    expect(call("graphql.is_valid", queryAST, schema)).toBe(true);
    expect(call("graphql.is_valid", query, schemaAST)).toBe(true);
    expect(call("graphql.schema_is_valid", schemaAST)).toBe(true);
    expect(call("graphql.parse", query, schemaAST)).toEqual([queryAST, schemaAST]);
  });

  it("reports errors in OPA's frame", () => {
    expect(errorOf("graphql.parse_query", `{employeeByID("alice"`)).toBe(
      "eval_builtin_error: graphql.parse_query: Expected Name, found String in GraphQL string at location 1:15",
    );
    expect(errorOf("graphql.parse", `{ nope }`, schema)).toMatch(
      /^eval_builtin_error: graphql.parse: Cannot query field "nope" on type "Query" in GraphQL query string at location 1:3$/,
    );
  });

  it("runs through the SDK", async () => {
    expect(await evalRego(`r := graphql.is_valid("{ a }", "type Query { a: Int }")`)).toBe(true);
  });
});

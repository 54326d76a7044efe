/**
 * `x-mcp-header` in a contract's schemas: the registry accepts it on a top-level string, integer
 * or boolean property of an input schema (the contract's or a view's), reports the declarations
 * of the MCP view, shows the keyword to MCP only, and refuses it anywhere else with a pointer to
 * the field and what to write instead (a conforming MCP client drops a tool whose declaration is
 * invalid).
 */
import { describe, expect, it } from "vitest";
import { CompiledContractRegistry, type ToolContractInput } from "../../src/contracts/index.ts";
import { WritError } from "../../src/core/errors.ts";

function contract(
  inputSchema: Record<string, unknown>,
  extra: Partial<ToolContractInput> = {},
): ToolContractInput {
  return {
    name: "sql.run",
    version: "1",
    description: "Run a query",
    input_schema: { type: "object", ...inputSchema },
    side_effect: "none",
    idempotency: "natural",
    backend: { kind: "inprocess", handler: "sql.run" },
    ...extra,
  };
}

const region = { type: "string", "x-mcp-header": "Region" };

/** The field errors the registry refuses the contract with (empty when it accepts it). */
function problems(inputSchema: Record<string, unknown>, extra: Partial<ToolContractInput> = {}) {
  try {
    CompiledContractRegistry.fromConfig([contract(inputSchema, extra)], "/tools");
    return [];
  } catch (error) {
    if (!(error instanceof WritError)) throw error;
    return error.fieldErrors;
  }
}

describe("x-mcp-header", () => {
  it("is accepted on top-level string, integer and boolean properties; the MCP view's are reported", () => {
    const registry = CompiledContractRegistry.fromConfig(
      [
        contract({
          properties: {
            region,
            shard: { type: "integer", "x-mcp-header": "Shard" },
            dry_run: { type: "boolean", "x-mcp-header": "Dry-Run" },
            query: { type: "string" },
          },
        }),
      ],
      "/tools",
    );
    const [sql] = registry.list();
    if (sql === undefined) throw new Error("no contract");
    expect(registry.mcpHeadersOf(sql)).toEqual([
      { property: "region", header: "Region", type: "string" },
      { property: "shard", header: "Shard", type: "integer" },
      { property: "dry_run", header: "Dry-Run", type: "boolean" },
    ]);
    // Arguments are still checked against the schema (the keyword is an annotation).
    expect(registry.checkInput(sql, { region: "eu", shard: 2, dry_run: true })).toEqual([]);
    expect(registry.checkInput(sql, { region: 3 })).toHaveLength(1);
    // Shown to MCP clients only: the other families' models do not see the keyword.
    expect(registry.modelView(sql, "mcp").input_schema.properties).toMatchObject({ region });
    expect(registry.modelView(sql, "openai").input_schema.properties).toMatchObject({
      region: { type: "string" },
    });
    expect(JSON.stringify(registry.modelView(sql, "default"))).not.toContain("x-mcp-header");
  });

  it("is read from the MCP view's own input schema when it has one", () => {
    const registry = CompiledContractRegistry.fromConfig(
      [
        contract(
          { properties: { region: { type: "string" } } },
          {
            model_views: [
              {
                family: "mcp",
                name: "run_sql",
                input_schema: {
                  type: "object",
                  properties: { region: { ...region, "x-mcp-header": "Zone" } },
                },
              },
            ],
          },
        ),
      ],
      "/tools",
    );
    const [sql] = registry.list();
    if (sql === undefined) throw new Error("no contract");
    expect(registry.mcpHeadersOf(sql)).toEqual([{ property: "region", header: "Zone", type: "string" }]);
  });

  it.each([
    [
      "a name that is no header token",
      { properties: { region: { ...region, "x-mcp-header": "Re gion" } } },
      "/tools/0/input_schema/properties/region/x-mcp-header",
      "must be the name of the header",
    ],
    [
      "an empty name",
      { properties: { region: { ...region, "x-mcp-header": "" } } },
      "/tools/0/input_schema/properties/region/x-mcp-header",
      "must be the name of the header",
    ],
    [
      "a name that is not a string",
      { properties: { region: { ...region, "x-mcp-header": 42 } } },
      "/tools/0/input_schema/properties/region/x-mcp-header",
      "must be the name of the header",
    ],
    [
      "a number property",
      { properties: { ratio: { type: "number", "x-mcp-header": "Ratio" } } },
      "/tools/0/input_schema/properties/ratio/type",
      "string, integer or boolean only",
    ],
    [
      "an object property",
      { properties: { where: { type: "object", "x-mcp-header": "Where" } } },
      "/tools/0/input_schema/properties/where/type",
      "string, integer or boolean only",
    ],
    [
      "two names equal but for case",
      { properties: { region, zone: { type: "string", "x-mcp-header": "REGION" } } },
      "/tools/0/input_schema/properties/zone/x-mcp-header",
      "already the header of region",
    ],
    [
      "a nested property",
      { properties: { target: { type: "object", properties: { region } } } },
      "/tools/0/input_schema/properties/target/properties/region/x-mcp-header",
      "top-level property",
    ],
    [
      "a declaration under anyOf",
      { anyOf: [{ properties: { region } }] },
      "/tools/0/input_schema/anyOf/0/properties/region/x-mcp-header",
      "top-level property",
    ],
    [
      "a declaration in $defs",
      { $defs: { region } },
      "/tools/0/input_schema/$defs/region/x-mcp-header",
      "top-level property",
    ],
    [
      "a declaration on the schema itself",
      { "x-mcp-header": "Everything" },
      "/tools/0/input_schema/x-mcp-header",
      "top-level property",
    ],
  ])("is refused with %s", (_, inputSchema, path, message) => {
    const found = problems(inputSchema);
    expect(found).toHaveLength(1);
    expect(found[0]?.path).toBe(path);
    expect(found[0]?.message).toContain(message);
  });

  it("is refused in an output schema", () => {
    const found = problems(
      { properties: { query: { type: "string" } } },
      { output_schema: { type: "object", properties: { region } } },
    );
    expect(found).toEqual([
      {
        path: "/tools/0/output_schema/properties/region/x-mcp-header",
        message: expect.stringContaining("input schemas only"),
      },
    ]);
  });

  it("is refused where a view's input schema misplaces it", () => {
    const found = problems(
      { properties: { region: { type: "string" } } },
      { model_views: [{ family: "mcp", name: "run_sql", input_schema: { type: "object", items: region } }] },
    );
    expect(found.map((problem) => problem.path)).toEqual([
      "/tools/0/model_views/0/input_schema/items/x-mcp-header",
    ]);
  });
});

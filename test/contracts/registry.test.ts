import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import {
  CompiledContractRegistry,
  type ContractRegistry,
  contractsJsonSchema,
  parseToolContracts,
  type ToolContractInput,
} from "../../src/contracts/index.ts";
import { errorOf } from "../intake/helpers.ts";
import { repoRead, repoWrite, ticketsSearch } from "./fixtures.ts";

function registryOf(...contracts: ToolContractInput[]): ContractRegistry {
  return CompiledContractRegistry.fromConfig(contracts);
}

describe("ContractRegistry", () => {
  const registry = registryOf(ticketsSearch(), repoWrite(), repoRead());

  it("resolves the model-facing name of the call's family, falling back to the default view", () => {
    expect(registry.resolve("read_file", "openai")?.name).toBe("repo.read");
    expect(registry.resolve("repo_read", "anthropic")?.name).toBe("repo.read");
    expect(registry.resolve("repo_read", "mcp")?.name).toBe("repo.read");
    // OpenAI models are shown read_file, so repo_read is not an OpenAI name.
    expect(registry.resolve("repo_read", "openai")).toBeUndefined();
    expect(registry.resolve("find_tickets", "anthropic")?.name).toBe("tickets.search");
    expect(registry.resolve("search_tickets", "openai")?.name).toBe("tickets.search");
    expect(registry.resolve("search_tickets", "anthropic")).toBeUndefined();
  });

  it("also resolves canonical names, with or without version", () => {
    for (const source of ["openai", "anthropic", "mcp", "canonical"] as const) {
      expect(registry.resolve("repo.write", source)?.version).toBe("1");
      expect(registry.resolve("tickets.search@2", source)?.name).toBe("tickets.search");
    }
    expect(registry.resolve("tickets.search@1", "canonical")).toBeUndefined();
    expect(registry.resolve("repo", "canonical")).toBeUndefined();
  });

  it("needs the version when a canonical name has several", () => {
    const two = registryOf(repoRead(), {
      ...repoRead(),
      version: "2",
      model_views: [{ family: "default", name: "repo_read_v2" }],
    });
    expect(two.resolve("repo.read", "canonical")).toBeUndefined();
    expect(two.resolve("repo.read@2", "canonical")?.version).toBe("2");
    expect(two.resolve("repo_read_v2", "openai")?.version).toBe("2");
    expect(two.versionsOf("repo.read")).toEqual(["1", "2"]);
  });

  it("lists contracts by name, then version (numerically)", () => {
    const many = registryOf(
      { ...repoRead(), version: "10", model_views: [{ family: "default", name: "r10" }] },
      ticketsSearch(),
      { ...repoRead(), version: "2", model_views: [{ family: "default", name: "r2" }] },
      repoWrite(),
    );
    expect(many.list().map((contract) => `${contract.name}@${contract.version}`)).toEqual([
      "repo.read@2",
      "repo.read@10",
      "repo.write@1",
      "tickets.search@2",
    ]);
    expect(many.modelNames("openai")).toEqual(["r10", "r2", "repo_write", "search_tickets"]);
  });

  it("shows each family its view, with the contract's description and schema as defaults", () => {
    const read = registry.get("repo.read", "1");
    const search = registry.get("tickets.search", "2");
    if (read === undefined || search === undefined) throw new Error("contracts missing");
    expect(registry.modelView(read, "openai")).toEqual({
      name: "read_file",
      description: "Read one file.",
      input_schema: read.input_schema,
    });
    expect(registry.modelView(read, "default")).toEqual({
      name: "repo_read",
      description: "Read a file from a repository.",
      input_schema: read.input_schema,
    });
    expect(registry.modelView(search, "anthropic")).toEqual({
      name: "find_tickets",
      description: "Find support tickets by text.",
      input_schema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
    });
    expect(registry.modelView(search, "mcp").name).toBe("search_tickets");
  });

  it("checks arguments and results against the compiled schemas", () => {
    const read = registry.get("repo.read", "1");
    if (read === undefined) throw new Error("contract missing");
    expect(registry.checkInput(read, { repo: "writ", path: "README.md" })).toEqual([]);
    expect(registry.checkInput(read, { repo: "", path: 7, mode: "raw" })).toEqual([
      { pointer: "/mode", message: "is not a field the schema allows; remove it" },
      { pointer: "/repo", message: "must NOT have fewer than 1 characters" },
      { pointer: "/path", message: "must be string, got integer" },
    ]);
    expect(registry.checkOutput(read, { content: "# Writ" })).toEqual([]);
    expect(registry.checkOutput(read, {})).toEqual([{ pointer: "/content", message: "is required" }]);
  });

  it("keeps its own frozen copies of the contracts", () => {
    const [given] = parseToolContracts([repoRead()]);
    if (given === undefined) throw new Error("contract missing");
    const own = new CompiledContractRegistry([given]).get("repo.read", "1");
    expect(own).toEqual(given);
    expect(Object.isFrozen(own?.input_schema)).toBe(true);
    expect(Object.isFrozen(given.input_schema)).toBe(false);
  });

  it("refuses two contracts with one name and version", () => {
    const error = errorOf(() =>
      CompiledContractRegistry.fromConfig([repoRead(), repoWrite(), repoRead()], "/tools"),
    );
    expect(error.field_errors).toEqual([
      {
        path: "/tools/2/version",
        message: "repo.read@1 is already declared at /tools/0; give this one another version",
      },
    ]);
  });

  it("refuses model-facing names used twice in a family, or equal to another tool's canonical name", () => {
    const versions = errorOf(() => registryOf(repoRead(), { ...repoRead(), version: "2" }));
    expect(versions.field_errors).toEqual([
      {
        path: "/1/name",
        message:
          'the model-facing name "repo_read" (default, anthropic, mcp) is already used by repo.read@1; declare a model view with another name',
      },
      {
        path: "/1/model_views/0/name",
        message:
          'the model-facing name "read_file" (openai) is already used by repo.read@1; declare a model view with another name',
      },
    ]);
    const shadow = errorOf(() =>
      registryOf(
        { ...ticketsSearch(), name: "search", model_views: [{ family: "default", name: "search_all" }] },
        { ...repoRead(), model_views: [{ family: "mcp", name: "search" }] },
      ),
    );
    expect(shadow.field_errors).toEqual([
      {
        path: "/1/model_views/0/name",
        message:
          'the model-facing name "search" (mcp) is the canonical name of search@2; declare a model view with another name',
      },
    ]);
  });

  it("reports schemas that do not compile as config errors, at the offending pointer", () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [
        { input_schema: { type: "object", properties: { path: { type: "text" } } } },
        "/0/input_schema/properties/path/type",
        /not a valid JSON Schema: must be equal to one of the allowed values/,
      ],
      [
        { input_schema: { type: "object", requried: ["path"] } },
        "/0/input_schema",
        /strict mode: unknown keyword: "requried"/,
      ],
      [
        { input_schema: { type: "object", properties: { at: { type: "string", format: "timestamp" } } } },
        "/0/input_schema",
        /unknown format "timestamp"/,
      ],
      [
        { input_schema: { $schema: "http://json-schema.org/draft-04/schema#", type: "object" } },
        "/0/input_schema/$schema",
        /draft 2020-12/,
      ],
      [
        { output_schema: { $ref: "https://example.com/result.json" } },
        "/0/output_schema",
        /can't resolve reference/,
      ],
      [
        {
          model_views: [
            { family: "openai", name: "read_file", input_schema: { type: "object", minProperties: -1 } },
          ],
        },
        "/0/model_views/0/input_schema/minProperties",
        /must be >= 0/,
      ],
    ];
    for (const [change, path, message] of cases) {
      const error = errorOf(() => registryOf({ ...repoRead(), ...change }));
      expect(error.field_errors, JSON.stringify(change)).toHaveLength(1);
      expect(error.field_errors[0]?.path, JSON.stringify(change)).toBe(path);
      expect(error.field_errors[0]?.message, JSON.stringify(change)).toMatch(message);
    }
  });
});

describe("JSON Schema dialects", () => {
  // What MCP servers built on zod 3 list (server-memory, server-filesystem): draft-07, declared.
  const draft07 = "http://json-schema.org/draft-07/schema#";

  it("checks a schema that declares draft-07 as draft-07, and one without $schema as 2020-12", () => {
    const tuple = {
      type: "object" as const,
      properties: { pair: { type: "array", items: [{ type: "string" }] } },
    };
    const registry = registryOf({ ...repoRead(), input_schema: { $schema: draft07, ...tuple } });
    const [read] = registry.list();
    if (read === undefined) throw new Error("no contract");
    // draft-07's array form of items is a tuple: the first item is checked, the rest are free.
    expect(registry.checkInput(read, { pair: ["a", 1] })).toEqual([]);
    expect(registry.checkInput(read, { pair: [1] })).toEqual([
      { pointer: "/pair/0", message: "must be string, got integer" },
    ]);
    // In 2020-12 the array form of items is not a schema at all.
    const error = errorOf(() => registryOf({ ...repoRead(), input_schema: tuple }));
    expect(error.field_errors[0]?.path).toBe("/0/input_schema/properties/pair/items");
  });

  it("checks draft-07 output schemas too, with Writ's formats", () => {
    const registry = registryOf({
      ...repoRead(),
      output_schema: {
        $schema: draft07,
        type: "object",
        required: ["at"],
        properties: { at: { type: "string", format: "date-time" } },
        additionalProperties: false,
      },
    });
    const [read] = registry.list();
    if (read === undefined) throw new Error("no contract");
    expect(registry.checkOutput(read, { at: "2026-12-02T04:00:00Z" })).toEqual([]);
    expect(registry.checkOutput(read, { at: "yesterday", more: 1 }).map((v) => v.pointer)).toEqual([
      "/more",
      "/at",
    ]);
  });
});

describe("contractsJsonSchema", () => {
  const schema = contractsJsonSchema();
  const validate = new Ajv2020({ strict: false, validateFormats: false }).compile(schema);

  it("is a draft 2020-12 schema of the tools list, with descriptions for editors", () => {
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.type).toBe("array");
    expect(JSON.stringify(schema)).toContain("Canonical tool name, e.g. repo.read");
  });

  it("accepts contracts as written (defaults left out) and refuses unknown fields", () => {
    expect(validate([repoRead(), repoWrite(), ticketsSearch()])).toBe(true);
    expect(validate([{ ...repoRead(), owner: "platform" }])).toBe(false);
  });
});

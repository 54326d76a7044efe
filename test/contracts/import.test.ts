/**
 * Contracts from a server's lists (src/contracts/import/): effect fields from hints only when
 * trusted and always marked as claims, names a contract and a model accept, drift as JSON
 * Pointers, and YAML that loads back as the same contracts.
 */
import type { Prompt, Tool } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  contractDrift,
  effectDefaults,
  importContracts,
  importedYaml,
  jsonDifferences,
  type ServerCatalog,
} from "../../src/contracts/import/index.ts";
import { CompiledContractRegistry, parseToolContracts } from "../../src/contracts/index.ts";

const schema = { type: "object" as const, properties: { q: { type: "string" } }, required: ["q"] };

function tool(name: string, extra: Partial<Tool> = {}): Tool {
  return { name, inputSchema: schema, ...extra };
}

function catalog(tools: Tool[], prompts: Prompt[] = []): ServerCatalog {
  return {
    tools,
    resources: [{ name: "readme", uri: "docs://readme" }],
    templates: [{ name: "page", uriTemplate: "docs://page/{id}{?lang,v*}" }],
    prompts,
  };
}

describe("effectDefaults", () => {
  it("maps hints to effect fields only when trusted, each marked as the server's claim", () => {
    const cases: [Tool["annotations"], string, string][] = [
      [{ readOnlyHint: true }, "none", "natural"],
      [{ readOnlyHint: true, destructiveHint: true }, "none", "natural"],
      [{ readOnlyHint: false, destructiveHint: true, idempotentHint: true }, "committing", "natural"],
      [{ readOnlyHint: false, destructiveHint: false }, "committing", "none"],
      [{ idempotentHint: true }, "committing", "natural"],
      [undefined, "committing", "none"],
    ];
    for (const [hints, sideEffect, idempotency] of cases) {
      const trusted = effectDefaults(hints, true);
      expect([trusted.side_effect, trusted.idempotency], JSON.stringify(hints)).toEqual([
        sideEffect,
        idempotency,
      ]);
      // Never trusted: committing, idempotency none, whatever the server claims.
      const conservative = effectDefaults(hints, false);
      expect([conservative.side_effect, conservative.idempotency]).toEqual(["committing", "none"]);
      expect(conservative.notes.side_effect).toContain("not trusted");
    }
    expect(effectDefaults({ readOnlyHint: true }, true).notes.side_effect).toBe(
      "from the server's readOnlyHint: a claim, not a fact; review before trusting it",
    );
    expect(effectDefaults(undefined, true).notes.side_effect).toContain(
      "the server gives no readOnlyHint or destructiveHint",
    );
    expect(effectDefaults({ openWorldHint: true }, true).remarks.join()).toContain("openWorldHint: true");
    expect(effectDefaults({}, true).remarks.join()).toContain("absent (MCP's default is true)");
  });
});

describe("importContracts", () => {
  it("gives every tool, resource, template and prompt a contract the registry accepts", () => {
    const imported = importContracts(
      catalog(
        [
          tool("search", {
            title: "Search",
            description: "Finds things",
            annotations: { readOnlyHint: true },
          }),
          tool("files/write.v2", {
            outputSchema: { type: "object", properties: { ok: { type: "boolean" } } },
          }),
          tool(`long_${"x".repeat(80)}`),
        ],
        [
          {
            name: "summarize",
            arguments: [
              { name: "topic", required: true },
              { name: "tone", description: "How it sounds" },
            ],
          },
        ],
      ),
      { server: "docs", trustHints: true },
    );
    const contracts = parseToolContracts(imported.map((item) => item.contract));
    const registry = new CompiledContractRegistry(contracts);
    expect(contracts.map((c) => c.name)).toEqual([
      "docs.search",
      "docs.files_write_v2",
      expect.stringMatching(/^docs\.long_x+-[0-9a-f]{8}$/),
      "docs.resource.readme",
      "docs.resource.page",
      "docs.prompt.summarize",
    ]);
    expect(contracts.every((c) => c.name.length <= 64)).toBe(true);
    const [search, write] = contracts;
    expect(search).toMatchObject({
      side_effect: "none",
      idempotency: "natural",
      description: "Finds things",
      input_schema: schema,
    });
    // No description: the title, else a sentence naming the tool; the model sees a name it can call.
    expect(write).toMatchObject({
      side_effect: "committing",
      description: "The tool files/write.v2 of the MCP server docs",
    });
    expect(write?.backend).toEqual({ kind: "mcp", server: "docs", tool: "files/write.v2" });
    expect(registry.modelNames("default")).toContain("files_write_v2");
    expect(imported[1]?.heading.join("\n")).toContain(
      'the server names this tool "files/write.v2", which a model cannot call',
    );
    expect(contracts[4]?.input_schema).toEqual({
      type: "object",
      properties: {
        uri: { type: "string" },
        id: { type: "string" },
        lang: { type: "string" },
        v: { type: "string" },
      },
      required: ["uri"],
    });
    expect(contracts[5]).toMatchObject({
      side_effect: "none",
      backend: { kind: "mcp_prompt", server: "docs", prompt: "summarize" },
      input_schema: {
        type: "object",
        properties: { topic: { type: "string" }, tone: { type: "string", description: "How it sounds" } },
        required: ["topic"],
        additionalProperties: false,
      },
    });
  });

  it("keeps names apart when the server's names clean up to the same one", () => {
    const imported = importContracts(catalog([tool("a.b"), tool("a_b")]), { server: "s", trustHints: false });
    expect(
      imported.slice(0, 2).map((item) => [item.contract.name, item.contract.model_views?.[0]?.name]),
    ).toEqual([
      ["s.a_b", "a_b"],
      ["s.a_b--1", "a_b--1"],
    ]);
  });
});

describe("importedYaml", () => {
  it("loads back as the same contracts, with a comment beside every field from a hint", () => {
    const imported = importContracts(
      catalog([
        tool("search", {
          title: "Search",
          description: "Finds",
          annotations: { readOnlyHint: true, openWorldHint: false },
        }),
      ]),
      { server: "docs", trustHints: true },
    );
    const text = importedYaml({
      server: "docs",
      entry: { name: "docs", transport: "http", url: "http://127.0.0.1:9/mcp" },
      origin: "http://127.0.0.1:9/mcp",
      info: { name: "docs-server", version: "1.2.3" },
      imported,
    });
    const document: unknown = parseYaml(text);
    expect(document).toEqual({
      mcp: { servers: [{ name: "docs", transport: "http", url: "http://127.0.0.1:9/mcp" }] },
      tools: imported.map((item) => item.contract),
    });
    expect(text).toContain(
      "  # Search (the server's title)\n  # openWorldHint: false: the server says this tool stays within its own data",
    );
    expect(text).toContain(
      "    # from the server's readOnlyHint: a claim, not a fact; review before trusting it\n    side_effect: none\n",
    );
    expect(text).toContain("    backend: { kind: mcp, server: docs, tool: search }\n");
    expect(text).toMatch(
      /^# Contracts imported by writ contracts import from the MCP server "docs" \(docs-server 1\.2\.3\),$/m,
    );
  });
});

describe("drift", () => {
  it("gives the JSON Pointer of every difference between two schemas", () => {
    expect(
      jsonDifferences(
        { type: "object", properties: { "a/b": { type: "string" }, gone: {} }, required: ["a/b"] },
        { type: "object", properties: { "a/b": { type: "number" }, new: {} }, required: ["a/b", "new"] },
      ),
    ).toEqual([
      { pointer: "/properties/a~1b/type", change: "changed" },
      { pointer: "/properties/gone", change: "removed" },
      { pointer: "/properties/new", change: "added" },
      { pointer: "/required/1", change: "added" },
    ]);
    expect(jsonDifferences({ a: [1, 2] }, { a: [1, 2] })).toEqual([]);
  });

  it("finds added, removed and changed tools, resources and prompts of one server only", () => {
    const before = catalog(
      [tool("keep"), tool("gone"), tool("edit", { annotations: { readOnlyHint: true } })],
      [{ name: "p" }],
    );
    const contracts = parseToolContracts(
      importContracts(before, { server: "s", trustHints: true }).map((i) => i.contract),
    );
    const other = parseToolContracts(
      importContracts(catalog([tool("gone")]), { server: "other", trustHints: true }).map((i) => i.contract),
    );
    const after: ServerCatalog = {
      ...before,
      tools: [tool("keep"), tool("edit", { inputSchema: { type: "object" } }), tool("new")],
      templates: [],
      prompts: [{ name: "p", arguments: [{ name: "x" }] }],
    };
    expect(contractDrift([...contracts, ...other], "s", before)).toEqual([]);
    expect(contractDrift([...contracts, ...other], "s", after)).toEqual([
      {
        change: "changed",
        kind: "tool",
        name: "edit",
        contract: "s.edit",
        differences: [
          { field: "input_schema", pointer: "/properties", change: "removed" },
          { field: "input_schema", pointer: "/required", change: "removed" },
          {
            field: "side_effect",
            pointer: "",
            change: "changed",
            detail: expect.stringContaining("no longer claims"),
          },
        ],
      },
      { change: "added", kind: "tool", name: "new" },
      {
        change: "changed",
        kind: "prompt",
        name: "p",
        contract: "s.prompt.p",
        differences: [{ field: "input_schema", pointer: "/properties/x", change: "added" }],
      },
      { change: "removed", kind: "tool", name: "gone", contract: "s.gone" },
      {
        change: "removed",
        kind: "resource",
        name: "docs://page/{id}{?lang,v*}",
        contract: "s.resource.page",
      },
    ]);
  });
});

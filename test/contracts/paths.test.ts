/**
 * Path declarations in a contract's input schema: the registry accepts good ones wherever Writ
 * reaches them (nested in objects and arrays), and `writ config check` refuses bad ones with a
 * pointer to the field and what to write instead.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { configCommand } from "../../src/cli/config.ts";
import { CompiledContractRegistry, type ToolContractInput } from "../../src/contracts/index.ts";
import { WritError } from "../../src/core/errors.ts";

function contract(inputSchema: Record<string, unknown>): ToolContractInput {
  return {
    name: "docs.read",
    version: "1",
    description: "Read documents",
    input_schema: { type: "object", ...inputSchema },
    side_effect: "none",
    idempotency: "natural",
    backend: { kind: "inprocess", handler: "docs.read" },
  };
}

const docPath = { type: "string", format: "path", "x-writ-root": "/srv/docs" };

/** The field errors the registry refuses `inputSchema` with (empty when it accepts it). */
function problems(inputSchema: Record<string, unknown>): Array<{ path: string; message: string }> {
  try {
    CompiledContractRegistry.fromConfig([contract(inputSchema)], "/tools");
    return [];
  } catch (error) {
    if (!(error instanceof WritError)) throw error;
    return error.fieldErrors;
  }
}

describe("path declarations", () => {
  it("are accepted on properties, nested objects, array items, prefixItems and additionalProperties", () => {
    expect(problems({ properties: { path: docPath } })).toEqual([]);
    expect(problems({ properties: { path: { ...docPath, "x-writ-relative": true } } })).toEqual([]);
    expect(problems({ properties: { paths: { type: "array", items: docPath } } })).toEqual([]);
    expect(problems({ properties: { pair: { type: "array", prefixItems: [docPath, docPath] } } })).toEqual(
      [],
    );
    expect(problems({ properties: { copy: { type: "object", properties: { from: docPath } } } })).toEqual([]);
    expect(problems({ additionalProperties: docPath })).toEqual([]);
    expect(problems({ properties: { path: { ...docPath, "x-writ-root": "/" } } })).toEqual([]);
  });

  it.each([
    [
      "a root that is not absolute",
      { properties: { path: { ...docPath, "x-writ-root": "srv/docs" } } },
      "/tools/0/input_schema/properties/path/x-writ-root",
      "must be an absolute path such as /srv/docs",
    ],
    [
      "a root not in normal form",
      { properties: { path: { ...docPath, "x-writ-root": "/srv/./docs/" } } },
      "/tools/0/input_schema/properties/path/x-writ-root",
      "must be written in normal form: /srv/docs",
    ],
    [
      "a root that is not a string",
      { properties: { path: { ...docPath, "x-writ-root": 7 } } },
      "/tools/0/input_schema/properties/path/x-writ-root",
      "must be the absolute path the path is confined to",
    ],
    [
      "format: path on a non-string",
      { properties: { path: { ...docPath, type: "array" } } },
      "/tools/0/input_schema/properties/path/format",
      "format: path needs type: string",
    ],
    [
      "format: path without a root",
      { properties: { path: { type: "string", format: "path" } } },
      "/tools/0/input_schema/properties/path",
      "format: path needs x-writ-root",
    ],
    [
      "a root without format: path",
      { properties: { path: { type: "string", "x-writ-root": "/srv" } } },
      "/tools/0/input_schema/properties/path/x-writ-root",
      "applies to a path only",
    ],
    [
      "x-writ-relative that is not a boolean",
      { properties: { path: { ...docPath, "x-writ-relative": "yes" } } },
      "/tools/0/input_schema/properties/path/x-writ-relative",
      "must be true or false",
    ],
    [
      "a path under anyOf",
      { properties: { path: { anyOf: [docPath, { type: "number" }] } } },
      "/tools/0/input_schema/properties/path/anyOf/0",
      "Writ normalizes paths declared under properties",
    ],
    [
      "a path behind $ref",
      { $defs: { p: docPath }, properties: { path: { $ref: "#/$defs/p" } } },
      "/tools/0/input_schema/$defs/p",
      "not under a combinator, $defs or $ref",
    ],
  ])("refuses %s", (_what, inputSchema, pointer, message) => {
    const found = problems(inputSchema);
    expect(found).toHaveLength(1);
    expect(found[0]?.path).toBe(pointer);
    expect(found[0]?.message).toContain(message);
  });

  it("leaves a property named x-writ-root alone", () => {
    expect(problems({ properties: { "x-writ-root": { type: "string" } } })).toEqual([]);
  });
});

describe("writ config check", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "writ-paths-check-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function check(pathSchema: string): Promise<{ code: number; err: string }> {
    const file = path.join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
    await writeFile(
      file,
      `tools:
  - name: docs.read
    version: "1"
    description: Read a document
    side_effect: none
    idempotency: natural
    input_schema: { type: object, properties: { path: ${pathSchema} } }
    backend: { kind: http, method: GET, url: "http://127.0.0.1:9/docs" }
`,
    );
    const out = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const err = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const code = await configCommand(["check", "--config", file]);
      return { code, err: err.mock.calls.map((c) => c.join(" ")).join("\n") };
    } finally {
      out.mockRestore();
      err.mockRestore();
    }
  }

  it("accepts a good declaration", async () => {
    expect(await check("{ type: string, format: path, x-writ-root: /srv/docs }")).toEqual({
      code: 0,
      err: "",
    });
  });

  it("refuses a root that is not absolute, naming the field", async () => {
    const answer = await check("{ type: string, format: path, x-writ-root: docs }");
    expect(answer.code).toBe(1);
    expect(answer.err).toContain(
      '/tools/0/input_schema/properties/path/x-writ-root: must be an absolute path such as /srv/docs, not "docs"',
    );
  });

  it("refuses format: path on a non-string, naming the field", async () => {
    const answer = await check("{ type: integer, format: path, x-writ-root: /srv/docs }");
    expect(answer.code).toBe(1);
    expect(answer.err).toContain(
      "/tools/0/input_schema/properties/path/format: format: path needs type: string",
    );
  });
});

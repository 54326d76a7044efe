/**
 * The SDK's declarations: generated from the default config's contracts, they are TypeScript the
 * compiler accepts, a program written against them type-checks, and a program that gets a tool's
 * arguments wrong does not (what a model sees is what the contract says).
 */
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { typeOf } from "../../src/codemode/schema-to-ts.ts";
import { type SdkTool, sdkDeclarations } from "../../src/codemode/sdk.ts";
import { parseConfig } from "../../src/config/index.ts";
import { defaultConfigDocument } from "../support/config-file.ts";

async function defaultTools(): Promise<SdkTool[]> {
  const config = parseConfig(await defaultConfigDocument(), process.cwd());
  return config.tools.map((contract) => ({
    name:
      contract.model_views.find((v) => v.family === "default")?.name ?? contract.name.replaceAll(".", "_"),
    description: contract.description,
    input_schema: contract.input_schema,
    ...(contract.output_schema === undefined ? {} : { output_schema: contract.output_schema }),
    contract: { name: contract.name, version: contract.version, side_effect: contract.side_effect },
  }));
}

const libraries = new Map<string, ts.SourceFile | undefined>();

/**
 * The compiler's diagnostics for each program (the body of an async function) against
 * `declarations`, all checked in one compilation.
 */
function diagnostics(declarations: string, programs: Record<string, string>): Record<string, string> {
  const files = new Map([["/sdk.d.ts", declarations]]);
  for (const [name, program] of Object.entries(programs)) {
    files.set(`/${name}.ts`, `export {};\nasync function run() {\n${program}\n}\nvoid run;\n`);
  }
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2022.d.ts"],
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version) => {
    const text = files.get(name);
    if (text !== undefined) return ts.createSourceFile(name, text, version);
    // The standard library's files are parsed once for every check of this file.
    let lib = libraries.get(name);
    if (lib === undefined) {
      lib = read(name, version);
      libraries.set(name, lib);
    }
    return lib;
  };
  host.fileExists = (name) => files.has(name) || ts.sys.fileExists(name);
  const compiled = ts.createProgram([...files.keys()], options, host);
  const found: Record<string, string> = Object.fromEntries(Object.keys(programs).map((name) => [name, ""]));
  for (const d of ts.getPreEmitDiagnostics(compiled)) {
    const name = d.file?.fileName.slice(1, -3) ?? "sdk";
    found[name] = `${found[name] ?? ""}${ts.flattenDiagnosticMessageText(d.messageText, "\n")}\n`;
  }
  return found;
}

describe("the Code Mode SDK", () => {
  it("declares each tool by its model-facing name, with its description, argument and output types", async () => {
    const sdk = sdkDeclarations(await defaultTools());
    expect(sdk).toContain("declare const tools: Tools;");
    expect(sdk).toContain("repo_read(args: {");
    expect(sdk).toContain("Read one file of the workspace");
    // The payments contract declares its output: the call resolves to it.
    expect(sdk).toMatch(
      /create_payment_draft\(args: \{[\s\S]*?\}\): Promise<\{\n\s+draft_id: string;\n\s+status: "draft";/,
    );
    // Formats and bounds are comments, not types.
    expect(sdk).toContain("format: path");
  });

  it("is TypeScript a program type-checks against, and a wrong call does not", async () => {
    const sdk = sdkDeclarations(await defaultTools());
    const good = `
      const [a, b] = await Promise.all([
        tools.repo_read({ workspace: "ws-demo", path: "README.md" }),
        tools.repo_read({ workspace: "ws-demo", path: "src/sum.ts" }),
      ]);
      const draft = await tools.create_payment_draft({ account: "acct", amount: 5, currency: "EUR" });
      console.log(draft.draft_id);
      return [a, b];`;
    const found = diagnostics(sdk, {
      good,
      wrong: `return tools.repo_read({ workspace: "ws-demo", file: "x" });`,
      unknown: `return tools.no_such_tool({});`,
    });
    expect(found.good).toBe("");
    expect(found.sdk).toBeUndefined();
    expect(found.wrong).toMatch(/file/);
    expect(found.unknown).toMatch(/no_such_tool/);
  });

  it("converts the JSON Schema subset contracts use", () => {
    expect(typeOf({ type: "string", enum: ["a", "b"] })).toBe('"a" | "b"');
    expect(typeOf({ const: 3 })).toBe("3");
    expect(typeOf({ type: ["string", "null"] })).toBe("string | null");
    expect(typeOf({ anyOf: [{ type: "integer" }, { type: "array", items: { type: "string" } }] })).toBe(
      "number | string[]",
    );
    expect(typeOf({ type: "array", items: { anyOf: [{ type: "string" }, { type: "number" }] } })).toBe(
      "(string | number)[]",
    );
    expect(
      typeOf({ type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false }),
    ).toBe("[string, number]");
    expect(typeOf({ type: "object" })).toBe("{\n  [key: string]: unknown;\n}");
    expect(
      typeOf({ type: "object", properties: { "a-b": { type: "boolean" } }, additionalProperties: false }),
    ).toBe('{\n  "a-b"?: boolean;\n}');
    expect(typeOf({ $ref: "#/$defs/x" })).toBe("unknown");
    // A comment cannot be closed from a description.
    const sdk = sdkDeclarations([
      {
        name: "odd-name",
        description: "ends */ here",
        input_schema: { type: "object" },
        contract: { name: "odd", version: "1", side_effect: "none" },
      },
    ]);
    expect(sdk).toContain('"odd-name"(args');
    expect(sdk).not.toContain("ends */");
    expect(diagnostics(sdk, { odd: `return tools["odd-name"]({ any: 1 });` })).toEqual({ odd: "" });
  });
});

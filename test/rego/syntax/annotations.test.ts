/**
 * `# METADATA` annotations: parsing, attachment and scopes as OPA does them, malformed blocks as
 * parse errors, and `rego.metadata.rule()` / `rego.metadata.chain()` evaluated in rules.
 */
import { describe, expect, it } from "vitest";
import { compile } from "../../../src/rego/compile/index.ts";
import { parseModule } from "../../../src/rego/syntax/index.ts";
import { parseMessages, planRule, wasmRule } from "./evaluate.ts";

const policy = `# METADATA
# title: Example
# description: A package.
# authors:
# - John Doe <john@example.com>
# - name: Jane
# organizations:
# - Acme Corp.
package example

# METADATA
# scope: document
# description: The allow document.
# related_resources:
# - https://example.com/allow
# - ref: https://example.com/docs
#   description: docs

# METADATA
# title: Allow rule
# custom:
#   severity: high
#   tags: [a, b]
# schemas:
#   - input.user: schema.user
allow if {
  input.ok
}

rule_meta := rego.metadata.rule()
chain_meta := rego.metadata.chain()

# METADATA
# title: annotated
annotated := [rego.metadata.rule(), rego.metadata.chain()]
`;

describe("parsing", () => {
  it("parses blocks with their scopes, fields and locations", () => {
    const { module, errors } = parseModule(policy, "p.rego");
    expect(errors).toEqual([]);
    const annotations = module!.annotations;
    expect(annotations.map((a) => [a.scope, a.loc.line, a.target?.kind])).toEqual([
      ["package", 1, "package"],
      ["document", 11, "rule"],
      ["rule", 19, "rule"],
      ["rule", 33, "rule"],
    ]);
    const [pkg, doc, rule] = annotations;
    expect(pkg!.authors).toEqual([{ name: "John Doe", email: "john@example.com" }, { name: "Jane" }]);
    expect(pkg!.organizations).toEqual(["Acme Corp."]);
    expect(doc!.related_resources).toEqual([
      { ref: "https://example.com/allow" },
      { ref: "https://example.com/docs", description: "docs" },
    ]);
    expect(rule!.custom).toEqual({ severity: "high", tags: ["a", "b"] });
    expect(rule!.schemas).toEqual([{ path: ["input", "user"], schema: ["schema", "user"] }]);
  });

  it("defaults entrypoints to the document scope", () => {
    const { module } = parseModule("package p\n# METADATA\n# entrypoint: true\nallow := true\n", "p.rego");
    expect(module!.annotations[0]!.scope).toBe("document");
  });

  it("reports malformed blocks as parse errors", () => {
    expect(parseMessages("package p\n# METADATA\n# scope: rule\npackage_name := 1\n")).toEqual([]);
    expect(parseMessages("# METADATA\n# scope: rule\npackage p\n")).toEqual([
      "p.rego:1:1: rego_parse_error: annotation scope 'rule' must be applied to rule (found package)",
    ]);
    expect(parseMessages("package p\n# METADATA\n# scope: package\np := 1\n")).toEqual([
      "p.rego:2:1: rego_parse_error: annotation scope 'package' must be applied to package (found rule)",
    ]);
    expect(parseMessages("package p\n# METADATA\n# scope: everything\np := 1\n")).toEqual([
      "p.rego:2:1: rego_parse_error: invalid annotation scope 'everything'. Use one of 'rule', 'document', 'package', or 'subpackages'",
    ]);
    expect(parseMessages("package p\n# METADATA\n# entrypoint: true\n# scope: rule\np := 1\n")).toEqual([
      "p.rego:2:1: rego_parse_error: annotation entrypoint applied to non-document or package scope 'rule'",
    ]);
    expect(parseMessages("package p\n# METADATA\n#\np := 1\n")).toEqual([
      "p.rego:2:1: rego_parse_error: expected METADATA block, found whitespace",
    ]);
    const yaml = parseMessages("package p\n# METADATA\n# title: [unclosed\np := 1\n");
    expect(yaml).toHaveLength(1);
    expect(yaml[0]).toMatch(/^p\.rego:3:1: rego_parse_error: yaml: line \d+: /);
    expect(parseMessages("package p\n# METADATA\n# authors: [{}]\np := 1\n")[0]).toContain(
      "'name' and/or 'email' values required in object",
    );
  });

  it("ignores comments that only mention METADATA further in", () => {
    expect(parseModule("package p\n  # METADATA\n# not: [yaml\np := 1\n", "p.rego").errors).toEqual([]);
  });
});

describe("rego.metadata", () => {
  it("gives a rule its own annotation, or an empty object", () => {
    expect(planRule(policy, "data.example.rule_meta")).toEqual({});
    const [ruleMeta] = planRule(policy, "data.example.annotated") as [unknown];
    expect(ruleMeta).toEqual({ scope: "rule", title: "annotated" });
  });

  it("gives the chain from the rule out to its package", () => {
    expect(planRule(policy, "data.example.chain_meta")).toEqual([
      { path: ["example", "chain_meta"] },
      {
        path: ["example"],
        annotations: {
          scope: "package",
          title: "Example",
          description: "A package.",
          authors: [{ name: "John Doe", email: "john@example.com" }, { name: "Jane" }],
          organizations: ["Acme Corp."],
        },
      },
    ]);
  });

  it("includes document and subpackages scopes", async () => {
    const source = `# METADATA
# scope: subpackages
# title: root
package a.b

# METADATA
# scope: document
# title: doc
p := rego.metadata.chain()

# METADATA
# title: first
p := 2 if false

# METADATA
# title: mine
q := rego.metadata.chain()
`;
    const chain = [
      { path: ["a", "b", "p"] },
      { path: ["a", "b", "p"], annotations: { scope: "document", title: "doc" } },
      { path: ["a", "b"], annotations: { scope: "subpackages", title: "root" } },
    ];
    expect(planRule(source, "data.a.b.p")).toEqual(chain);
    expect(planRule(source, "data.a.b.q")).toEqual([
      { path: ["a", "b", "q"], annotations: { scope: "rule", title: "mine" } },
      { path: ["a", "b"], annotations: { scope: "subpackages", title: "root" } },
    ]);
    expect(await wasmRule(source, "a/b/p")).toEqual(chain);
  });

  it("runs in a compiled policy", async () => {
    const source = `package p
# METADATA
# title: Deny
# custom:
#   code: 42
deny := {"code": meta.custom.code, "title": meta.title} if meta := rego.metadata.rule()
`;
    expect(await wasmRule(source, "p/deny")).toEqual({ code: 42, title: "Deny" });
  });

  it("reports a package annotated twice", () => {
    const modules = [
      "# METADATA\n# title: a\npackage p\n",
      "# METADATA\n# title: b\npackage p\nx := 1\n",
    ].map((source, i) => parseModule(source, `m${i}.rego`).module!);
    expect(compile(modules).errors.map((e) => e.message)).toEqual([
      "m1.rego:1:1: rego_compile_error: package annotation redeclared: m0.rego:1",
    ]);
  });
});

/**
 * An import and a rule of the same name in one module: the import wins inside that module (OPA
 * puts imports over rules when it resolves names), while the package's other modules still see
 * the rule. Built to Wasm and evaluated with the SDK.
 */
import { describe, expect, it } from "vitest";
import { buildErrors, resultOf } from "./evaluate.ts";

const files = [
  {
    file: "app.rego",
    source: `package app

import data.lib.limit

limit := 1

uses_import := limit
`,
  },
  { file: "other.rego", source: "package app\n\nuses_rule := limit\n" },
  { file: "lib.rego", source: "package lib\n\nlimit := 100\n" },
];

describe("an import sharing its name with a rule of its module", () => {
  it("compiles", () => {
    expect(buildErrors(files, "app/uses_import")).toEqual([]);
  });

  it("names the import inside its module and the rule in the others", async () => {
    expect(await resultOf(files, "x = data.app")).toEqual({ limit: 1, uses_import: 100, uses_rule: 1 });
  });
});

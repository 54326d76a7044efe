/**
 * Rego v0 through the formatter, as `opa fmt` does it (`cmd/fmt.go`, `v1/format/format.go`):
 * `--v0-v1` (target `v0-v1`) writes v1 that v0 reads the same (`if`, `contains`, `:=`, `import
 * rego.v1` added where OPA puts it, `future.keywords` imports dropped) and refuses what v1 cannot
 * take (OPA's `CheckRegoV1`); `--v0-compatible` (target `v0`) keeps v0 as v0. When the Gatekeeper
 * library (Rego v0) is present, a few of its folders are converted and their tests must have the
 * same results from the v1 files as from the v0 files (bench/fmt-v0-v1.ts does all of them).
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type FormatOptions, formatSource } from "../../../src/rego/format/index.ts";
import { parseModule } from "../../../src/rego/syntax/index.ts";
import { corporaDir } from "../../support/paths.ts";
import { convertFolder, statusChanges } from "../../support/v0-v1.ts";

function format(source: string, options: FormatOptions): string {
  const result = formatSource(source, "policy.rego", options);
  if (!result.ok) throw new Error(result.errors.map((e) => e.message).join("\n"));
  return result.text;
}

function errors(source: string, options: FormatOptions): string[] {
  const result = formatSource(source, "policy.rego", options);
  return result.ok ? [] : result.errors.map((e) => e.message);
}

const v0 = `package example

import future.keywords.in

# allow is true for admins
default allow = false

allow {
  input.user.role == "admin"
}

allow = true {
  some x in input.roles
  x == "root"
}

deny[msg] {
  not input.user
  msg := "no user"
}

obj[k] = v { some k; v := input.m[k] }

f(x) = y {
  y := x + 1
}

g(x) { x > 1 }

p = 7

else_rule = 1 {
  input.a
} else = 2 {
  input.b
} else = 3
`;

const v0v1 = `package example

import rego.v1

# allow is true for admins
default allow := false

allow if {
	input.user.role == "admin"
}

allow if {
	some x in input.roles
	x == "root"
}

deny contains msg if {
	not input.user
	msg := "no user"
}

obj[k] := v if {
	some k
	v := input.m[k]
}

f(x) := y if {
	y := x + 1
}

g(x) if x > 1

p := 7

else_rule := 1 if {
	input.a
} else := 2 if {
	input.b
} else := 3
`;

describe("formatSource --v0-v1", () => {
  it("writes Rego v0 as v1 with import rego.v1, where the future imports were", () => {
    expect(format(v0, { target: "v0-v1" })).toBe(v0v1);
  });

  it("writes what Rego v1 parses, and formats to itself as v1 and again with --v0-v1 --v1-compatible", () => {
    expect(parseModule(v0v1, "policy.rego", { regoVersion: 1 }).errors).toEqual([]);
    expect(format(v0v1, { target: "v1" })).toBe(v0v1);
    expect(format(v0v1, { target: "v0-v1", regoVersion: 1 })).toBe(v0v1);
  });

  it("adds import rego.v1 first when no future import says where", () => {
    const source = "package p\n\nimport data.lib\n\nallow { lib.ok }\n";
    expect(format(source, { target: "v0-v1" })).toBe(
      "package p\n\nimport rego.v1\n\nimport data.lib\n\nallow if lib.ok\n",
    );
  });

  it("writes the added import after the package when its row would follow a rule", () => {
    // The future import on row 5 puts rego.v1 on row 6, after the rule on row 3.
    const source = "package p\n\nallow { input.x }\n\nimport future.keywords.in\n";
    expect(format(source, { target: "v0-v1" })).toBe("package p\n\nimport rego.v1\n\nallow if input.x\n");
  });

  it("keeps an existing import rego.v1 and drops future imports beside it", () => {
    const source = "package p\n\nimport future.keywords.if\nimport rego.v1\n\nallow if input.x\n";
    expect(format(source, { target: "v0-v1" })).toBe("package p\n\nimport rego.v1\n\nallow if input.x\n");
  });

  it("refuses what Rego v1 cannot take, with OPA's errors", () => {
    expect(errors("package p\n\ncontains[x] { x := 1 }\n", { target: "v0-v1" })).toEqual([
      "policy.rego:3:1: rego_parse_error: contains keyword cannot be used for rule name",
    ]);
    expect(errors("package p\n\np { any([true]) }\n", { target: "v0-v1" })).toEqual([
      "policy.rego:3:5: rego_type_error: deprecated built-in function calls in expression: any",
    ]);
    expect(errors("package p\n\np { input := 1 }\n", { target: "v0-v1" })).toEqual([
      "policy.rego:3:5: rego_compile_error: variables must not shadow input (use a different variable name)",
    ]);
    expect(errors("package p\n\nf(data) { true }\n", { target: "v0-v1" })).toEqual([
      "policy.rego:3:3: rego_compile_error: args must not shadow data (use a different variable name)",
    ]);
    expect(errors("package p\n\nimport data.a\nimport data.b.a\n", { target: "v0-v1" })).toEqual([
      "policy.rego:4:1: rego_compile_error: import must not shadow import data.a",
    ]);
  });

  it("makes the same checks of a Rego v1 module (opa fmt's default)", () => {
    expect(errors("package p\n\np if re_match(`a`, input.x)\n", {})).toEqual([
      "policy.rego:3:6: rego_type_error: deprecated built-in function calls in expression: re_match",
    ]);
  });

  it("reads Rego v0: a v1 module's keywords are names there", () => {
    expect(errors("package p\n\np if { true }\n", { target: "v0-v1" }).join()).toContain("rego_parse_error");
  });
});

describe("formatSource --v0-compatible", () => {
  it("keeps Rego v0 as v0: no if or contains unless imported, = as written", () => {
    expect(format(v0, { target: "v0" })).toBe(`package example

import future.keywords.in

# allow is true for admins
default allow = false

allow {
	input.user.role == "admin"
}

allow {
	some x in input.roles
	x == "root"
}

deny[msg] {
	not input.user
	msg := "no user"
}

obj[k] = v {
	some k
	v := input.m[k]
}

f(x) = y {
	y := x + 1
}

g(x) {
	x > 1
}

p = 7

else_rule = 1 {
	input.a
} else = 2 {
	input.b
} else = 3
`);
  });

  it("writes if and contains where v0 imports them", () => {
    const source =
      "package p\n\nimport future.keywords.if\nimport future.keywords.contains\n\nd contains x if { x := 1 }\n";
    expect(format(source, { target: "v0" })).toBe(
      "package p\n\nimport future.keywords.contains\nimport future.keywords.if\n\nd contains x if x := 1\n",
    );
  });
});

const gatekeeper = path.join(corporaDir, "gatekeeper-library/src");
const hasGatekeeper = existsSync(gatekeeper);
if (!hasGatekeeper) {
  console.warn(`Gatekeeper library not found at ${gatekeeper}: its --v0-v1 conversion test is skipped`);
}

/** A few folders: partial sets, functions, else chains, chained bodies, some … in, data.json. */
const FOLDERS = [
  "general/allowedrepos",
  "general/containerlimits",
  "general/requiredlabels",
  "general/httpsonly",
  "pod-security-policy/capabilities",
  "pod-security-policy/host-network-ports",
];

describe.skipIf(!hasGatekeeper)("the Gatekeeper library converted with --v0-v1", () => {
  let out: string | undefined;
  afterAll(async () => {
    if (out !== undefined) await rm(out, { recursive: true, force: true });
  });

  it.each(FOLDERS)(
    "%s: v1 files that pass the tests the v0 files pass",
    { timeout: 120_000 },
    async (folder) => {
      out ??= await mkdtemp(path.join(tmpdir(), "writ-v0-v1-"));
      const conversion = await convertFolder(path.join(gatekeeper, folder), path.join(out, folder));
      expect(conversion.files).toBeGreaterThan(1);
      expect(conversion.problems).toEqual([]);
      expect(conversion.v0.size).toBeGreaterThan(0);
      expect([...conversion.v0.values()].every((status) => status === "PASS")).toBe(true);
      expect(statusChanges(conversion)).toEqual([]);
    },
  );
});

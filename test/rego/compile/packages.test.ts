/**
 * A package split over several files is one namespace, as in OPA: rules, functions, defaults,
 * ref heads and `with` targets of one file are named bare in another; imports stay per file;
 * conflicts between files name both places. Evaluated through the real SDK.
 */
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";

const rules = `package app.authz

import data.roles as role_table

default allow := false

admins contains name if {
  some name, rs in role_table
  "admin" in rs
}

limit := 10

tier[name] := "gold" if some name in admins
`;

const functions = `package app.authz

is_admin(user) if user in admins

within_limit(n) if n <= limit

label(user) := tier[user] if user in admins
else := "basic"
`;

const decisions = `package app.authz

allow if {
  is_admin(input.user)
  within_limit(input.amount)
}

summary := {"allow": allow, "label": label(input.user), "limit": limit}

# A mock of a rule defined in another file of the package.
mocked := s if s := summary with limit as 1000
`;

const files = [
  { file: "rules.rego", source: rules },
  { file: "functions.rego", source: functions },
  { file: "decisions.rego", source: decisions },
];

async function evaluate(query: string, input: unknown): Promise<unknown[]> {
  const built = buildPolicy(files, { queries: [{ name: "q", query }] });
  expect(built.errors.map((e) => e.message)).toEqual([]);
  if (!built.wasm) throw new Error("no module");
  const policy = await loadCompiledPolicy({
    wasm: built.wasm,
    hostBuiltins: built.hostBuiltins,
    data: { roles: { alice: ["admin"], bob: ["viewer"] } },
  });
  return policy.evaluate(input, "q");
}

describe("a package split over three files", () => {
  it("evaluates as one package: rules, functions, else chains, defaults and ref heads", async () => {
    expect(await evaluate("x = data.app.authz.summary", { user: "alice", amount: 5 })).toEqual([
      { x: { allow: true, label: "gold", limit: 10 } },
    ]);
    expect(await evaluate("x = data.app.authz.summary", { user: "bob", amount: 5 })).toEqual([
      { x: { allow: false, label: "basic", limit: 10 } },
    ]);
    expect(await evaluate("x = data.app.authz.allow", { user: "alice", amount: 50 })).toEqual([{ x: false }]);
  });

  it("lets `with` in one file replace a rule defined in another", async () => {
    expect(await evaluate("x = data.app.authz.mocked", { user: "alice", amount: 50 })).toEqual([
      { x: { allow: true, label: "gold", limit: 1000 } },
    ]);
  });

  it("keeps imports per file: an alias of one file is unknown in another", () => {
    const built = buildPolicy(
      [...files, { file: "extra.rego", source: "package app.authz\n\nn := count(role_table)\n" }],
      { entrypoints: ["app/authz/n"] },
    );
    expect(built.errors.map((e) => e.message)).toEqual([
      "extra.rego:3:12: rego_unsafe_var_error: var role_table is unsafe",
    ]);
  });

  it("reports a conflict between files once, naming both places", () => {
    const built = buildPolicy(
      [...files, { file: "conflict.rego", source: "package app.authz\n\nlimit(x) := x\n" }],
      { entrypoints: ["app/authz/allow"] },
    );
    expect(built.errors.map((e) => e.message)).toEqual([
      "conflict.rego:3:1: rego_type_error: conflicting rules data.app.authz.limit found (conflicts with rules.rego:12:1)",
    ]);
  });
});

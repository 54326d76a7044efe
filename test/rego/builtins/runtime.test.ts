/**
 * `opa.runtime()` through compiled policies and the SDK: the document the host gives (an empty
 * object without one, as OPA's library), a `with` mock in its place, and a host that refuses it
 * (a positioned compile error, unless every call is mocked).
 */

import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { processRuntime } from "../../../src/rego/opa-runtime.ts";
import { loadCompiledPolicy } from "../../../src/rego/policy.ts";
import { repoRoot } from "../../support/paths.ts";

const source = `package t

rt := opa.runtime()

shown := opa.runtime().env.WRIT_SHOWN

mocked := x if x := opa.runtime().env.HOME with opa.runtime as {"env": {"HOME": "/mock"}}
`;

const writVersion: unknown = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")).version;

async function evaluate(query: string, runtime?: Parameters<typeof loadCompiledPolicy>[0]["runtime"]) {
  const built = buildPolicy([{ file: "t.rego", source }], { queries: [{ name: "q", query }] });
  expect(built.errors.map((e) => e.message)).toEqual([]);
  const policy = await loadCompiledPolicy({
    wasm: built.wasm!,
    hostBuiltins: built.hostBuiltins,
    ...(runtime ? { runtime } : {}),
  });
  return policy.evaluate({}, "q");
}

describe("opa.runtime", () => {
  it("answers the host's document: env, Writ's version, commit and config", async () => {
    const runtime = { env: { WRIT_SHOWN: "yes" }, config: { policy: { entrypoint: "writ/decision" } } };
    expect(await evaluate("x = data.t.rt", runtime)).toEqual([
      {
        x: {
          env: { WRIT_SHOWN: "yes" },
          version: writVersion,
          commit: "",
          config: { policy: { entrypoint: "writ/decision" } },
        },
      },
    ]);
    expect(await evaluate("x = data.t.shown", runtime)).toEqual([{ x: "yes" }]);
  });

  it("is an empty object when the host gives none, as in OPA's library", async () => {
    expect(await evaluate("x = data.t.rt")).toEqual([{ x: {} }]);
  });

  it("shows the whole environment in the writ policy commands", () => {
    const shown = processRuntime();
    expect(shown.env.PATH).toBe(process.env.PATH);
    expect(Object.keys(shown.env).length).toBe(
      Object.values(process.env).filter((v) => v !== undefined).length,
    );
  });

  it("gives way to a `with` mock", async () => {
    expect(await evaluate("x = data.t.mocked", { env: { HOME: "/real" }, config: {} })).toEqual([
      { x: "/mock" },
    ]);
  });

  it("is a positioned compile error where a host refuses it, unless `with` replaces the call", () => {
    const refusedBuiltins = new Map([["opa.runtime", "turned off"]]);
    const refused = buildPolicy([{ file: "t.rego", source }], { entrypoints: ["t/rt"], refusedBuiltins });
    expect(refused.errors.map((e) => e.message)).toEqual([
      "t.rego:3:7: rego_type_error: unsafe built-in function calls in expression: opa.runtime (turned off)",
    ]);
    const mocked = buildPolicy([{ file: "t.rego", source }], { entrypoints: ["t/mocked"], refusedBuiltins });
    expect(mocked.errors).toEqual([]);
  });
});

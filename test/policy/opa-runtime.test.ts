/**
 * `opa.runtime()` in the gateway (`policy.opa_runtime`): a policy sees only the environment
 * variables the configuration lists and the policy settings that hold no secret; turned off, a
 * policy that calls it does not load (from sources, from the compiled-policy cache, or from a
 * bundle), with the place of the call when there are sources.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CompiledPolicyCache } from "../../src/policy/compiled-cache.ts";
import { type PolicyDecider, PolicyEngine, PolicyLoadError } from "../../src/policy/index.ts";
import { buildPolicy } from "../../src/rego/build.ts";
import { writeBundle } from "../../src/rego/bundle/index.ts";
import { startTestGateway } from "../support/gateway.ts";
import { policyInputFor } from "./inputs.ts";

/** A decision that reports what `opa.runtime()` shows it, as its reasons. */
const POLICY = `package writ

rt := opa.runtime()

decision := {
  "decision": "deny",
  "reasons": [
    {"code": "env", "message": sprintf("%v", [rt.env])},
    {"code": "entrypoint", "message": object.get(rt, ["config", "policy", "entrypoint"], "none")},
  ],
}
`;

let tmp: string;
let dir: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "writ-opa-runtime-"));
  dir = path.join(tmp, "policy");
  await mkdir(dir);
  await writeFile(path.join(dir, "decision.rego"), POLICY);
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** What the policy saw, from its reasons: `env=…`, `entrypoint=…`. */
const reasonsOf = (engine: PolicyDecider) =>
  engine.evaluate(policyInputFor("notes.read")).decision.reasons.map((r) => `${r.code}=${r.message}`);

describe("PolicyEngine and opa.runtime", () => {
  it("shows what the engine is given, and nothing by default", async () => {
    const given = new PolicyEngine({ opaRuntime: { env: { REGION: "eu" }, config: {} } });
    await given.loadDirectory(dir);
    expect(reasonsOf(given)).toEqual(['env={"REGION": "eu"}', "entrypoint=none"]);
    const plain = new PolicyEngine();
    await plain.loadDirectory(dir);
    expect(reasonsOf(plain)).toEqual(["env={}", "entrypoint=none"]);
  });

  it("refuses a policy that calls it when it is disabled, saying where", async () => {
    const engine = new PolicyEngine({ opaRuntime: "disabled" });
    const failure = await engine.loadDirectory(dir).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PolicyLoadError);
    expect(failure instanceof PolicyLoadError ? failure.details : []).toEqual([
      expect.stringMatching(
        /decision\.rego:3:7: rego_type_error: unsafe built-in function calls in expression: opa\.runtime \(policy\.opa_runtime\.enabled is false/,
      ),
    ]);
  });

  it("refuses it from the compiled-policy cache and from a bundle as well", async () => {
    const cache = new CompiledPolicyCache({
      readDirs: [],
      writeDir: path.join(tmp, "cache"),
      fingerprint: async () => "compiler",
    });
    await new PolicyEngine({ compiledCache: cache }).loadDirectory(dir);
    const cached = new PolicyEngine({ compiledCache: cache, opaRuntime: "disabled" });
    await expect(cached.loadDirectory(dir)).rejects.toThrow(/decision\.rego:3:7: .*opa\.runtime/);

    const built = buildPolicy([{ file: "decision.rego", source: POLICY }], {
      entrypoints: ["writ/decision"],
    });
    const bundle = await writeBundle({ wasm: built.wasm!, entrypoints: ["writ/decision"] });
    const fromBundle = new PolicyEngine({ opaRuntime: "disabled" });
    await expect(fromBundle.loadBundleBytes(bundle, "bundle.tar.gz")).rejects.toThrow(
      "its policy calls opa.runtime: policy.opa_runtime.enabled is false",
    );
    const allowed = new PolicyEngine();
    await allowed.loadBundleBytes(bundle, "bundle.tar.gz");
    expect(reasonsOf(allowed)).toEqual(["env={}", "entrypoint=none"]);
  });
});

describe("policy.opa_runtime in the gateway's configuration", () => {
  const shown = "WRIT_TEST_OPA_RUNTIME_SHOWN";
  const secret = "WRIT_TEST_OPA_RUNTIME_SECRET";
  beforeEach(() => {
    process.env[shown] = "visible";
    process.env[secret] = "s3cret";
  });
  afterEach(() => {
    delete process.env[shown];
    delete process.env[secret];
  });

  async function gatewayWith(opaRuntime: Record<string, unknown> | undefined) {
    return startTestGateway({
      configure: (document) => ({
        ...document,
        policy: {
          dir,
          watch: false,
          ...(opaRuntime === undefined ? {} : { opa_runtime: opaRuntime }),
        },
      }),
    });
  }

  it("shows no environment variable by default, and the policy settings as config", async () => {
    const gw = await gatewayWith(undefined);
    try {
      expect(reasonsOf(gw.gateway.policy)).toEqual(["env={}", "entrypoint=writ/decision"]);
    } finally {
      await gw.close();
    }
  });

  it("shows the listed environment variables only", async () => {
    const gw = await gatewayWith({ env: [shown, "WRIT_TEST_OPA_RUNTIME_UNSET"] });
    try {
      expect(reasonsOf(gw.gateway.policy)).toEqual([
        `env={"${shown}": "visible"}`,
        "entrypoint=writ/decision",
      ]);
    } finally {
      await gw.close();
    }
  });

  it("does not start with a policy that calls opa.runtime when it is disabled", async () => {
    await expect(gatewayWith({ enabled: false })).rejects.toThrow(
      /decision\.rego:3:7: rego_type_error: unsafe built-in function calls in expression: opa\.runtime/,
    );
  });
});

/**
 * The gateway's custom builtins (`policy.builtins`): resolved beside the configuration file,
 * loaded once, and given to the policy engine that compiles the folder calling them.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.ts";
import { loadPolicyBuiltins, PolicyEngine, PolicyLoadError } from "../../src/policy/index.ts";
import { defaultConfigDocument } from "../support/config-file.ts";
import { repoRoot } from "../support/paths.ts";
import { policyInputFor } from "./inputs.ts";

const fixture = path.join(repoRoot, "test/rego/builtins/fixtures/custom-builtins.mjs");

const policy = `package writ

import rego.v1

# The subject may act when the custom builtin names it as the owner of the path.
decision := {"decision": "allow", "reasons": []} if acme.owner_of(input.action.args.path) == input.subject.id

default decision := {"decision": "deny", "reasons": [{"code": "not_owner", "message": "not the owner", "visible_to_model": true}]}
`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "writ-builtins-"));
  await writeFile(path.join(dir, "decision.rego"), policy);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("policy.builtins", () => {
  it("is resolved relative to the configuration file", async () => {
    const document = await defaultConfigDocument();
    const policySection = typeof document.policy === "object" ? document.policy : {};
    const config = parseConfig(
      { ...document, policy: { ...policySection, builtins: ["builtins/acme.mjs", "/opt/x.mjs"] } },
      "/srv/writ",
    );
    expect(config.policy.builtins).toEqual(["/srv/writ/builtins/acme.mjs", "/opt/x.mjs"]);
  });

  it("gives the engine the builtins its policy calls", async () => {
    const builtins = await loadPolicyBuiltins([fixture]);
    const engine = new PolicyEngine({ builtins });
    await engine.loadDirectory(dir);
    const decide = (subject: string) =>
      engine.evaluate(policyInputFor("files.read", { subject: { id: subject }, args: { path: "/srv/app" } }))
        .decision.decision;
    expect(decide("alice")).toBe("allow");
    expect(decide("bob")).toBe("deny");
  });

  it("are called on the gateway's evaluator threads too, the module imported there", async () => {
    const builtins = await loadPolicyBuiltins([fixture]);
    const engine = new PolicyEngine({ builtins, isolate: true, timeBudgetMs: 5_000 });
    try {
      await engine.loadDirectory(dir);
      const decide = (subject: string) =>
        engine.evaluate(
          policyInputFor("files.read", { subject: { id: subject }, args: { path: "/srv/app" } }),
        ).decision.decision;
      expect(decide("alice")).toBe("allow");
      expect(decide("bob")).toBe("deny");
    } finally {
      engine.close();
    }
  });

  it("without them, the folder does not compile; a module that cannot load names itself", async () => {
    await expect(new PolicyEngine().loadDirectory(dir)).rejects.toThrow("undefined function acme.owner_of");
    const missing = loadPolicyBuiltins([path.join(dir, "nope.mjs")]);
    await expect(missing).rejects.toThrow(PolicyLoadError);
    await expect(loadPolicyBuiltins([path.join(dir, "nope.mjs")])).rejects.toThrow(
      `cannot load custom builtins from ${path.join(dir, "nope.mjs")}`,
    );
  });
});

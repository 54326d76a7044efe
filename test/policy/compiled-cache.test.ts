/**
 * The compiled-policy cache: a hit answers as a compile does, anything the compiler's output
 * depends on changing is a miss, and an entry that does not read back whole is recompiled.
 */
import { createHash } from "node:crypto";
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PolicyInput } from "../../src/core/types.ts";
import {
  CompiledPolicyCache,
  compilerCodeDigest,
  KEPT_ENTRIES,
  writeEntry,
} from "../../src/policy/compiled-cache.ts";
import { PolicyEngine, PolicyLoadError } from "../../src/policy/index.ts";
import { buildPolicy } from "../../src/rego/build.ts";
import { startTestGateway } from "../support/gateway.ts";
import { repoRoot } from "../support/paths.ts";
import { policyInputFor } from "./inputs.ts";

let tmp: string;
/** A copy of the sample policies (policies/), named from `tmp` as the package's are from its root. */
let policies: string;
let cacheDir: string;

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "writ-compiled-cache-"));
  policies = path.join(tmp, "policies");
  cacheDir = path.join(tmp, "cache");
  await cp(path.join(repoRoot, "policies"), policies, { recursive: true });
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const cacheWith = (fingerprint = "compiler-1", readDirs: string[] = []) =>
  new CompiledPolicyCache({ readDirs, writeDir: cacheDir, fingerprint: async () => fingerprint });

async function engineOver(cache: CompiledPolicyCache | undefined): Promise<PolicyEngine> {
  const engine = new PolicyEngine({
    sourceRoot: tmp,
    ...(cache === undefined ? {} : { compiledCache: cache }),
  });
  await engine.loadDirectory(policies);
  return engine;
}

const decisionFile = () => path.join(policies, "writ", "decision.rego");
const sourcesNow = async () => [
  { file: path.join("policies", "writ", "decision.rego"), source: await readFile(decisionFile(), "utf8") },
];

/** A policy that denies everything, planted under a key to see whether the engine reads it. */
async function plantDenyAll(key: string, dir = cacheDir): Promise<void> {
  const built = buildPolicy(
    [
      {
        file: "planted.rego",
        source:
          'package writ\n\nimport rego.v1\n\ndecision := {"decision": "deny", "reasons": [{"code": "planted", "message": "planted", "visible_to_model": true}]}\n',
      },
    ],
    { entrypoints: ["writ/decision"] },
  );
  if (!built.wasm) throw new Error("the planted policy does not compile");
  await writeEntry(dir, key, { wasm: built.wasm, hostBuiltins: built.hostBuiltins });
}

function input(
  action: string,
  options: {
    subject?: string;
    roles?: string[];
    scopes?: string[];
    resource?: PolicyInput["resource"];
    phase?: "call" | "discover";
  } = {},
): PolicyInput {
  return policyInputFor(action, {
    subject: {
      id: options.subject ?? "alice",
      tenant: "demo",
      roles: options.roles ?? [],
      scopes: options.scopes ?? [],
    },
    args: { workspace: "ws-demo", path: "README.md", amount: 40 },
    resource: options.resource ?? {
      type: "workspace",
      id: "ws-demo",
      known: true,
      owner: "alice",
      tenant: "demo",
      attributes: { read_paths: ["README.md"], edit_paths: [] },
    },
    context: { time_ns: 0, request_id: "r", source: "canonical", phase: options.phase ?? "call" },
  });
}

/** Inputs across the sample policy's branches: allow, deny, approval, conditions, discovery. */
const sampleInputs: PolicyInput[] = [
  input("repo.read"),
  input("repo.search", { phase: "discover" }),
  input("repo.read", { subject: "mallory" }),
  input("repo.read", { resource: { type: "workspace", id: "nope", known: false, attributes: {} } }),
  input("repo.apply_edit"),
  input("create_payment_draft"),
  input("create_payment_draft", { roles: ["treasurer"] }),
  input("commit_payment", { roles: ["treasurer"], scopes: ["payments:write", "payments:commit"] }),
  input("commit_payment"),
  input("shell.exec"),
];

const i8 = (key: string) => Number(key.slice(-2));
const answers = (engine: PolicyEngine) => sampleInputs.map((i) => engine.evaluate(i).decision);
const plantedAnswer = (engine: PolicyEngine) => engine.evaluate(input("repo.read")).decision.reasons[0]?.code;

describe("the compiled-policy cache", () => {
  it("a hit loads the same policy as a compile: same revision, same answers to the sample inputs", async () => {
    const compiled = await engineOver(undefined);
    const first = await engineOver(cacheWith());
    expect(await readdir(cacheDir)).toHaveLength(1);
    const hit = await engineOver(cacheWith());
    expect(hit.revision).toBe(compiled.revision);
    expect(first.revision).toBe(compiled.revision);
    expect(answers(hit)).toEqual(answers(compiled));
    expect(new Set(answers(compiled).map((d) => d.decision)).size).toBeGreaterThanOrEqual(4);
  });

  it("reads an entry it holds instead of compiling (a planted entry answers)", async () => {
    const cache = cacheWith();
    await plantDenyAll(await cache.key("writ/decision", await sourcesNow()));
    expect(plantedAnswer(await engineOver(cache))).toBe("planted");
    // The shipped folders are read too, and never written.
    const shipped = cacheDir;
    cacheDir = path.join(tmp, "writable");
    const layered = new CompiledPolicyCache({
      readDirs: [shipped],
      writeDir: cacheDir,
      fingerprint: async () => "compiler-1",
    });
    expect(plantedAnswer(await engineOver(layered))).toBe("planted");
    await expect(readdir(cacheDir)).rejects.toThrow();
  });

  it("a changed source misses", async () => {
    const cache = cacheWith();
    await plantDenyAll(await cache.key("writ/decision", await sourcesNow()));
    await writeFile(decisionFile(), `${await readFile(decisionFile(), "utf8")}\n# changed\n`);
    const engine = await engineOver(cache);
    expect(plantedAnswer(engine)).not.toBe("planted");
    expect(await readdir(cacheDir)).toHaveLength(2);
  });

  it("a changed source name, Rego version or entrypoint misses", async () => {
    const cache = cacheWith();
    const sources = await sourcesNow();
    const key = await cache.key("writ/decision", sources);
    expect(await cache.key("writ/other", sources)).not.toBe(key);
    expect(await cache.key("writ/decision", [{ ...sources[0]!, file: "elsewhere.rego" }])).not.toBe(key);
    // The same text read as Rego v0 is another source; read as v1, the same one.
    expect(
      await cache.key(
        "writ/decision",
        sources.map((s) => ({ ...s, regoVersion: 0 as const })),
      ),
    ).not.toBe(key);
    expect(
      await cache.key(
        "writ/decision",
        sources.map((s) => ({ ...s, regoVersion: 1 as const })),
      ),
    ).toBe(key);
    await plantDenyAll(key);
    // Named from the working directory instead of `tmp`: another key.
    const engine = new PolicyEngine({ compiledCache: cache });
    await engine.loadDirectory(policies);
    expect(plantedAnswer(engine)).not.toBe("planted");
  });

  it("another compiler fingerprint misses", async () => {
    await plantDenyAll(await cacheWith("compiler-1").key("writ/decision", await sourcesNow()));
    const engine = await engineOver(cacheWith("compiler-2"));
    expect(plantedAnswer(engine)).not.toBe("planted");
  });

  it("a corrupt entry is recompiled, not a failure, and replaced by a whole one", async () => {
    const compiled = answers(await engineOver(undefined));
    const cache = cacheWith();
    const key = await cache.key("writ/decision", await sourcesNow());
    const file = path.join(cacheDir, `${key}.json`);
    await plantDenyAll(key);
    const planted = JSON.parse(await readFile(file, "utf8"));
    const corruptions = [
      "{ not json",
      JSON.stringify({ ...planted, format: 99 }),
      JSON.stringify({ ...planted, key: "another" }),
      // Truncated wasm: its digest no longer matches.
      JSON.stringify({ ...planted, wasm: planted.wasm.slice(0, 100) }),
      // Bytes that are not WebAssembly, with a matching digest.
      JSON.stringify({
        ...planted,
        wasm: Buffer.from("not wasm").toString("base64"),
        wasm_sha256: createHash("sha256").update("not wasm").digest("hex"),
      }),
    ];
    for (const corrupt of corruptions) {
      await writeFile(file, corrupt);
      const engine = await engineOver(cache);
      expect(answers(engine)).toEqual(compiled);
      expect(answers(await engineOver(cache))).toEqual(compiled);
    }
  });

  it("compile errors are the same with a cache, and nothing is cached for them", async () => {
    await writeFile(decisionFile(), "package writ\n\ndecision := \n");
    const error = async (cache: CompiledPolicyCache | undefined) =>
      engineOver(cache).then(
        () => undefined,
        (e: unknown) => e,
      );
    const without = await error(undefined);
    const withCache = await error(cacheWith());
    expect(without).toBeInstanceOf(PolicyLoadError);
    expect(withCache).toEqual(without);
    await expect(readdir(cacheDir)).rejects.toThrow();
  });

  it("keeps the latest entries only (a policy edited under watch writes one per save)", async () => {
    const cache = cacheWith();
    const keys = Array.from({ length: KEPT_ENTRIES + 4 }, (_, i) => `key-${String(i).padStart(2, "0")}`);
    for (const key of keys) {
      await cache.put(key, { wasm: new Uint8Array([i8(key)]), hostBuiltins: [] });
      // Apart by more than the file system's timestamp granularity (a clock tick).
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    const kept = (await readdir(cacheDir)).sort();
    expect(kept).toEqual(keys.slice(-KEPT_ENTRIES).map((k) => `${k}.json`));
    expect(await cache.get(keys.at(-1)!)).toEqual({
      wasm: new Uint8Array([i8(keys.at(-1)!)]),
      hostBuiltins: [],
    });
  });

  it("the compiler's fingerprint changes with any file of the compiler", async () => {
    const compiler = path.join(tmp, "compiler");
    await cp(path.join(repoRoot, "src", "rego", "syntax"), compiler, { recursive: true });
    const before = await compilerCodeDigest([compiler]);
    expect(await compilerCodeDigest([compiler])).toBe(before);
    const [first] = (await readdir(compiler)).filter((f) => f.endsWith(".ts")).sort();
    await writeFile(path.join(compiler, first!), "// edited\n", { flag: "a" });
    expect(await compilerCodeDigest([compiler])).not.toBe(before);
  });
});

describe("a gateway with a SQLite store", () => {
  it("keeps compiled policies beside its database, and a restart loads them from there", async () => {
    const store = path.join(tmp, "state");
    const shared = (document: Record<string, unknown>) => ({
      ...document,
      store: { sqlite: path.join(store, "writ.db") },
      policy: { dir: policies, entrypoint: "writ/decision", watch: false },
    });
    const first = await startTestGateway({ configure: shared });
    const revision = first.gateway.policy.revision;
    await first.close();
    const entries = await readdir(path.join(store, "policy-cache"));
    expect(entries).toHaveLength(1);
    // The entry is what the restart loads: a planted policy under its key answers.
    await plantDenyAll(entries[0]!.replace(/\.json$/, ""), path.join(store, "policy-cache"));
    const second = await startTestGateway({ configure: shared });
    try {
      expect(second.gateway.policy.revision).toBe(revision);
      const decided = second.gateway.policy.evaluate(input("repo.read"));
      expect(decided.decision.reasons[0]?.code).toBe("planted");
    } finally {
      await second.close();
    }
  });
});

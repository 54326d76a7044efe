/**
 * Policy revisions archived: every revision an engine loads (a folder with its data, a bundle
 * file) is kept in a real store through `RevisionArchive`, once per id; loading it back from the
 * store gives the same revision id; a failed archive never fails the load and is tried again at
 * the next one.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WritError } from "../../src/core/errors.ts";
import {
  type LoadedRevision,
  loadRevision,
  PolicyEngine,
  RevisionArchive,
  revisionDocument,
} from "../../src/policy/index.ts";
import { bundleOrigin } from "../../src/policy/sources.ts";
import { buildPolicy } from "../../src/rego/build.ts";
import { writeBundle } from "../../src/rego/bundle/index.ts";
import { SqliteStore } from "../../src/store/index.ts";
import type { NewPolicyRevision, Store } from "../../src/store/types.ts";
import { POLICY } from "../pipeline/harness.ts";
import { policyInputFor } from "./inputs.ts";

let dir: string;
let store: SqliteStore;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "writ-revisions-"));
  store = await SqliteStore.open(":memory:");
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** An engine whose every load is archived in `to`; `errors` collects the failed archives. */
function archivingEngine(to: Pick<Store, "archivePolicyRevision">) {
  const errors: string[] = [];
  const archive = new RevisionArchive(to, (error, id) => errors.push(`${id}: ${String(error)}`));
  const engine = new PolicyEngine({ onLoad: (loaded) => archive.keep(loaded) });
  return { engine, archive, errors };
}

async function policyFolder(): Promise<string> {
  const folder = path.join(dir, "policy");
  await mkdir(path.join(folder, "limits"), { recursive: true });
  await writeFile(path.join(folder, "decision.rego"), POLICY);
  await writeFile(path.join(folder, "decision_test.rego"), "package writ\n\ntest_nothing if true\n");
  await writeFile(path.join(folder, "limits", "data.json"), JSON.stringify({ max: 10 }));
  return folder;
}

describe("archived policy revisions", () => {
  it("archives a folder with its data once per revision, and loading it back gives the same id", async () => {
    const { engine, archive, errors } = archivingEngine(store);
    const folder = await policyFolder();
    const revision = await engine.loadDirectory(folder);
    await engine.loadDirectory(folder);
    await archive.settled();
    expect(errors).toEqual([]);
    const page = await store.listPolicyRevisions(10);
    expect(page.revisions).toEqual([
      expect.objectContaining({ id: revision, kind: "directory", origin: folder }),
    ]);

    const record = await store.getPolicyRevision(revision);
    if (record === undefined) throw new Error("not archived");
    const document = await revisionDocument(record);
    // The sources and data files, not the tests.
    expect(document.files.map((f) => f.path)).toEqual(["decision.rego", path.join("limits", "data.json")]);
    expect(document.files[0]?.text).toBe(POLICY);

    const fresh = new PolicyEngine();
    expect(await loadRevision(fresh, record)).toBe(revision);
    expect(fresh.revision).toBe(revision);
    expect(fresh.evaluate(policyInputFor("notes.read")).decision.decision).toBe("allow");

    // Another revision of the folder is a second row, newest first.
    await writeFile(path.join(folder, "limits", "data.json"), JSON.stringify({ max: 20 }));
    const next = await engine.loadDirectory(folder);
    await archive.settled();
    expect(next).not.toBe(revision);
    expect((await store.listPolicyRevisions(10)).revisions.map((r) => r.id)).toEqual([next, revision]);
  });

  it("archives a Rego v0 folder with its version, which loading it back keeps", async () => {
    const errors: string[] = [];
    const archive = new RevisionArchive(store, (error, id) => errors.push(`${id}: ${String(error)}`));
    const engine = new PolicyEngine({ regoVersion: 0, onLoad: (loaded) => archive.keep(loaded) });
    const folder = path.join(dir, "v0");
    await mkdir(folder);
    await writeFile(
      path.join(folder, "decision.rego"),
      'package writ\n\ndefault decision = {"decision": "deny", "reasons": [], "conditions": []}\n\ndecision = {"decision": "allow", "reasons": [], "conditions": []} {\n  readable[input.action.name]\n}\n\nreadable["notes.read"]\n',
    );
    const revision = await engine.loadDirectory(folder);
    expect(engine.evaluate(policyInputFor("notes.read")).decision.decision).toBe("allow");
    await archive.settled();
    expect(errors).toEqual([]);

    const record = await store.getPolicyRevision(revision);
    if (record === undefined) throw new Error("not archived");
    const document = await revisionDocument(record);
    expect(document.files.map((f) => [f.path, f.rego_version])).toEqual([["decision.rego", 0]]);
    // An engine of Rego v1 (the default) loads the archived v0 revision as v0.
    const fresh = new PolicyEngine();
    expect(await loadRevision(fresh, record)).toBe(revision);
    expect(fresh.evaluate(policyInputFor("notes.read")).decision.decision).toBe("allow");
    expect(fresh.evaluate(policyInputFor("notes.write")).decision.decision).toBe("deny");
    await expect(new PolicyEngine().loadDirectory(folder)).rejects.toThrow("do not compile");
  });

  it("archives a bundle's bytes: its manifest revision, or its hash without one, loads back the same", async () => {
    const sources = [{ file: "writ/decision.rego", source: POLICY }];
    const built = buildPolicy(sources, { entrypoints: ["writ/decision"] });
    if (!built.wasm) throw new Error(built.errors.map((e) => e.message).join("\n"));
    const named = path.join(dir, "named.tar.gz");
    await writeFile(
      named,
      await writeBundle({ wasm: built.wasm, entrypoints: ["writ/decision"], sources, revision: "rev-7" }),
    );
    const { engine, archive } = archivingEngine(store);
    expect(await engine.loadBundle(named)).toBe("rev-7");
    await archive.settled();
    const record = await store.getPolicyRevision("rev-7");
    expect(record).toMatchObject({ kind: "bundle", origin: named });
    if (record === undefined) throw new Error("not archived");
    expect(await loadRevision(new PolicyEngine(), record)).toBe("rev-7");
    const document = await revisionDocument(record);
    expect(document.files).toEqual([{ path: "/writ/decision.rego", text: POLICY, rego_version: 1 }]);
    expect(document.manifest).toMatchObject({ revision: "rev-7" });
    expect(Buffer.from(document.bundle_base64 ?? "", "base64")).toEqual(Buffer.from(record.content));

    // A bundle without a revision in its manifest: its id is a hash of its bytes, the same again.
    const anonymous = path.join(dir, "anonymous.tar.gz");
    await writeFile(
      anonymous,
      await writeBundle({ wasm: built.wasm, entrypoints: ["writ/decision"], revision: "" }),
    );
    const hashed = await engine.loadBundle(anonymous);
    await archive.settled();
    const stored = await store.getPolicyRevision(hashed);
    if (stored === undefined) throw new Error("not archived");
    expect(await loadRevision(new PolicyEngine(), stored)).toBe(hashed);
  });

  it("a failed archive never fails the load, and is tried again with the next load", async () => {
    let failing = true;
    const flaky: Pick<Store, "archivePolicyRevision"> = {
      archivePolicyRevision: (revision: NewPolicyRevision) => {
        if (failing) {
          return Promise.reject(
            new WritError("internal", "the store is down", { suggestedFix: "start it again" }),
          );
        }
        return store.archivePolicyRevision(revision);
      },
    };
    const { engine, archive, errors } = archivingEngine(flaky);
    const folder = await policyFolder();
    const first = await engine.loadDirectory(folder);
    await archive.settled();
    expect(engine.revision).toBe(first);
    expect(errors).toEqual([expect.stringContaining(`${first}: `)]);
    expect(archive.unarchived).toEqual([first]);

    failing = false;
    await writeFile(path.join(folder, "limits", "data.json"), JSON.stringify({ max: 30 }));
    const second = await engine.loadDirectory(folder);
    await archive.settled();
    expect(archive.unarchived).toEqual([]);
    const ids = (await store.listPolicyRevisions(10)).revisions.map((r) => r.id);
    expect(ids.sort()).toEqual([first, second].sort());
  });

  it("names a bundle server without the credentials or query of its URL", () => {
    expect(bundleOrigin("https://user:secret@bundles.example/writ.tar.gz?token=abc#x")).toBe(
      "https://bundles.example/writ.tar.gz",
    );
    expect(bundleOrigin("bundles/writ.tar.gz")).toBe("bundles/writ.tar.gz");
  });

  it("reports each load to onLoad with what it was loaded from", async () => {
    const loaded: LoadedRevision[] = [];
    const engine = new PolicyEngine({ onLoad: (l) => loaded.push(l) });
    const folder = await policyFolder();
    const id = await engine.loadDirectory(folder);
    expect(loaded).toEqual([{ id, sources: expect.objectContaining({ kind: "directory", origin: folder }) }]);
    await expect(engine.loadDirectory(path.join(dir, "absent"))).rejects.toThrow(/does not exist/);
    expect(loaded).toHaveLength(1);
  });
});

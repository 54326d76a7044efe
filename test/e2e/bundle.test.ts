/**
 * The gateway loads its policy from a bundle (the layout of `opa build -t wasm`) and reloads it
 * when the file is replaced.
 */
import { mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPolicy } from "../../src/rego/build.ts";
import { writeBundle } from "../../src/rego/bundle/index.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { repoRoot } from "../support/paths.ts";

async function bundleOf(source: string, revision: string): Promise<Uint8Array> {
  const sources = [{ file: "writ/decision.rego", source }];
  const built = buildPolicy(sources, { entrypoints: ["writ/decision"] });
  if (!built.wasm) throw new Error(built.errors.map((e) => e.message).join("\n"));
  return writeBundle({ wasm: built.wasm, entrypoints: ["writ/decision"], sources, revision });
}

const readCall = {
  format: "canonical",
  payload: { tool: "repo_read", arguments: { workspace: "ws-demo", path: "README.md" } },
};

describe("a gateway whose policy is a bundle", () => {
  let tmp: string;
  let gw: TestGateway;
  let sample: string;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "writ-bundle-"));
    sample = await readFile(path.join(repoRoot, "policies/writ/decision.rego"), "utf8");
    const file = path.join(tmp, "bundle.tar.gz");
    await writeFile(file, await bundleOf(sample, "rev-1"));
    gw = await startTestGateway({ bundle: file });
  });

  afterAll(async () => {
    await gw?.close();
    await rm(tmp, { recursive: true, force: true });
  });

  it("decides with the bundle's policy and records its manifest revision", async () => {
    expect((await gw.health()).policy_revision).toBe("rev-1");
    const answer = await gw.propose(await gw.token("alice", { tenant: "demo" }), readCall);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('"decision":"allow"');
  });

  it("reloads when the bundle file is replaced", async () => {
    // Without repo.read among the governed actions, reads are denied as unknown actions.
    const denying = sample.replace('\t"repo.read": "read",\n', "");
    expect(denying).not.toBe(sample);
    const next = path.join(tmp, "next.tar.gz");
    await writeFile(next, await bundleOf(denying, "rev-2"));
    await rename(next, path.join(tmp, "bundle.tar.gz"));
    const deadline = Date.now() + 8000;
    while ((await gw.health()).policy_revision !== "rev-2" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
    }
    expect((await gw.health()).policy_revision).toBe("rev-2");
    const answer = await gw.propose(await gw.token("alice", { tenant: "demo" }), readCall);
    expect(answer.text).toContain('"decision":"deny"');
  });
});

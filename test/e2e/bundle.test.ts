/**
 * The gateway loads its policy from a bundle (the layout of `opa build -t wasm`) and reloads it
 * when the file is replaced.
 */
import { mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type ServerType, serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { buildPolicy } from "../../src/rego/build.ts";
import { writeBundle } from "../../src/rego/bundle/index.ts";
import { startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";
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

describe("a gateway whose policy comes from a bundle server", () => {
  const TOKEN_ENV = "WRIT_E2E_BUNDLE_TOKEN";
  let server: ServerType | undefined;
  let gw: TestGateway | undefined;
  let bundle: Uint8Array;
  let etag = '"rev-1"';
  let failing = false;
  const answered: number[] = [];

  beforeAll(async () => {
    const sample = await readFile(path.join(repoRoot, "policies/writ/decision.rego"), "utf8");
    bundle = await bundleOf(sample, "rev-1");
    process.env[TOKEN_ENV] = "bundle-secret";
    const app = new Hono();
    app.get("/bundles/writ.tar.gz", (c) => {
      const status = (() => {
        if (c.req.header("authorization") !== "Bearer bundle-secret") return 401;
        if (failing) return 500;
        return c.req.header("if-none-match") === etag ? 304 : 200;
      })();
      answered.push(status);
      if (status !== 200) return c.body(null, status);
      return c.body(Buffer.from(bundle), 200, { etag, "content-type": "application/gzip" });
    });
    const port = await new Promise<number>((resolve) => {
      server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) => resolve(info.port));
    });
    const url = `http://127.0.0.1:${port}/bundles/writ.tar.gz`;
    gw = await startTestGateway({
      configure: (document) => ({
        ...document,
        policy: {
          bundle: url,
          watch: true,
          bundle_poll_interval_s: 0.1,
          bundle_credentials_ref: "bundles",
        },
        credentials: {
          ...z.record(z.string(), z.unknown()).parse(document.credentials ?? {}),
          bundles: { from: "env", env: TOKEN_ENV },
        },
      }),
    });
  });

  afterAll(async () => {
    await gw?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    delete process.env[TOKEN_ENV];
  });

  async function revisionBecomes(revision: string): Promise<void> {
    await waitFor(`policy revision ${revision}`, async () =>
      (await gw?.health())?.policy_revision === revision ? true : undefined,
    );
  }

  it("loads the bundle with the configured credentials and asks again with If-None-Match", async () => {
    expect((await gw?.health())?.policy_revision).toBe("rev-1");
    await waitFor("a 304 answer", async () => (answered.includes(304) ? true : undefined));
    expect(answered).not.toContain(401);
    // The first poll asks with the ETag the load got: the bundle is not fetched (or installed) twice.
    expect(answered.slice(0, 2)).toEqual([200, 304]);
  });

  it("swaps in a new bundle, and keeps it while the server fails", async () => {
    const sample = await readFile(path.join(repoRoot, "policies/writ/decision.rego"), "utf8");
    bundle = await bundleOf(sample.replace('\t"repo.read": "read",\n', ""), "rev-2");
    etag = '"rev-2"';
    await revisionBecomes("rev-2");
    // Both revisions polled from the server are archived, with the bytes it served.
    const archived = await waitFor("rev-2 archived", async () =>
      gw?.gateway.store.getPolicyRevision("rev-2"),
    );
    expect(archived).toMatchObject({
      kind: "bundle",
      origin: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/bundles\/writ\.tar\.gz$/),
    });
    expect(Buffer.from(archived.content)).toEqual(Buffer.from(bundle));
    expect(await gw?.gateway.store.getPolicyRevision("rev-1")).toMatchObject({ kind: "bundle" });
    const token = await gw?.token("alice", { tenant: "demo" });
    expect((await gw?.propose(token, readCall))?.text).toContain('"decision":"deny"');

    failing = true;
    await waitFor("the failure to show", async () =>
      (await gw?.health())?.status === "degraded" ? true : undefined,
    );
    expect((await gw?.health())?.policy_revision).toBe("rev-2");
    failing = false;
    await waitFor("recovery", async () => ((await gw?.health())?.status === "ok" ? true : undefined));
  });
});

import { createHash } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import tar from "tar-stream";
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { BundleError, readBundle, writeBundle } from "../../../src/rego/bundle/index.ts";

const source = `package writ

default allow := false

allow if input.user in data.roles.admins

decision := {"allow": allow, "who": input.user}
`;

function compile(): { wasm: Uint8Array; entrypoints: string[] } {
  const built = buildPolicy([{ file: "writ/policy.rego", source }], {
    entrypoints: ["writ/decision", "writ/allow"],
  });
  expect(built.errors).toEqual([]);
  return { wasm: built.wasm!, entrypoints: built.entrypoints };
}

function bytes(chunk: unknown): Buffer {
  if (!(chunk instanceof Uint8Array)) throw new Error("tar-stream gave a non-byte chunk");
  return Buffer.from(chunk);
}

/** A plain tar of `files`, packed with tar-stream as a third-party tool would. */
async function tarOf(files: Record<string, string | Uint8Array>): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, content] of Object.entries(files)) {
    pack.entry({ name, mtime: new Date(0) }, Buffer.from(content));
  }
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(bytes(chunk));
  return Buffer.concat(chunks);
}

async function tarball(files: Record<string, string | Uint8Array>): Promise<Uint8Array> {
  return gzipSync(await tarOf(files));
}

async function readError(packed: Uint8Array): Promise<string> {
  const error = await readBundle(packed).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BundleError);
  return error instanceof Error ? error.message : "";
}

describe("writeBundle / readBundle", () => {
  const { wasm, entrypoints } = compile();
  const data = { roles: { admins: ["alice"] } };
  const sources = [{ file: "writ/policy.rego", source }];

  it("round-trips the module, data, sources and manifest", async () => {
    const written = await writeBundle({ wasm, entrypoints, data, sources });
    const bundle = await readBundle(written);
    expect(bundle.wasm).toEqual(wasm);
    expect(bundle.data).toEqual(data);
    expect(bundle.sources).toEqual([{ file: "/writ/policy.rego", source, regoVersion: 1 }]);
    expect(bundle.hasManifest).toBe(true);
    expect(bundle.manifest).toEqual({
      revision: expect.stringMatching(/^[0-9a-f]{64}$/),
      roots: [""],
      wasm: [
        { entrypoint: "writ/decision", module: "/policy.wasm" },
        { entrypoint: "writ/allow", module: "/policy.wasm" },
      ],
      rego_version: 1,
    });
  });

  it("writes the layout of opa build -t wasm", async () => {
    const written = await writeBundle({ wasm, entrypoints, data, sources });
    const names: string[] = [];
    const extract = tar.extract();
    const done = (async () => {
      for await (const entry of extract) {
        names.push(entry.header.name);
        entry.resume();
      }
    })();
    extract.end(gunzipSync(written));
    await done;
    expect(names).toEqual(["/data.json", "/writ/policy.rego", "/policy.wasm", "/.manifest"]);
  });

  it("is reproducible, and its revision is a hash of the contents unless given", async () => {
    const a = await writeBundle({ wasm, entrypoints, data, sources });
    const b = await writeBundle({ wasm, entrypoints, data, sources });
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    const other = await writeBundle({ wasm, entrypoints, data: { roles: { admins: [] } }, sources });
    expect((await readBundle(other)).manifest.revision).not.toBe((await readBundle(a)).manifest.revision);
    const named = await writeBundle({ wasm, entrypoints, data, sources, revision: "v42" });
    expect((await readBundle(named)).manifest.revision).toBe("v42");
  });

  it("refuses bundles it could not read back", async () => {
    await expect(writeBundle({ wasm, entrypoints: [] })).rejects.toThrow(/at least one entrypoint/);
    await expect(writeBundle({ wasm, entrypoints: ["a/b", "a/b"] })).rejects.toThrow(/given twice/);
    await expect(
      writeBundle({ wasm, entrypoints, sources: [{ file: "../outside.rego", source }] }),
    ).rejects.toThrow(/inside the bundle/);
    await expect(
      writeBundle({
        wasm,
        entrypoints,
        sources: [
          { file: "a.rego", source },
          { file: "/a.rego", source },
        ],
      }),
    ).rejects.toThrow(/stored as \/a.rego/);
  });
});

describe("readBundle of bundles built elsewhere", () => {
  const { wasm } = compile();

  it("reads the opa build layout without a manifest: leading slashes or none, nested data files", async () => {
    const packed = await tarball({
      "/policy.wasm": wasm,
      "/data.json": JSON.stringify({ top: 1 }),
      "/roles/data.json": JSON.stringify({ admins: ["alice"] }),
      "roles/ops/data.yaml": "members:\n  - bob\n",
      "./teams/data.yml": "- red\n- blue\n",
      "writ/policy.rego": source,
      "README.md": "ignored",
    });
    const bundle = await readBundle(packed);
    expect(bundle.wasm).toEqual(wasm);
    expect(bundle.hasManifest).toBe(false);
    expect(bundle.manifest).toEqual({ revision: "", roots: [""], wasm: [] });
    expect(bundle.data).toEqual({
      top: 1,
      roles: { admins: ["alice"], ops: { members: ["bob"] } },
      teams: ["red", "blue"],
    });
    expect(bundle.sources.map((s) => s.file)).toEqual(["/writ/policy.rego"]);
  });

  it("reads an opa manifest with roots and wasm resolvers", async () => {
    const manifest = {
      revision: "abc",
      roots: ["/writ/", "roles"],
      wasm: [{ entrypoint: "writ/decision", module: "/policy.wasm" }],
      rego_version: 1,
      metadata: { built_by: "opa" },
    };
    const packed = await tarball({
      "/.manifest": JSON.stringify(manifest),
      "/policy.wasm": wasm,
      "/roles/data.json": "{}",
    });
    const bundle = await readBundle(packed);
    expect(bundle.manifest.roots).toEqual(["writ", "roles"]);
    expect(bundle.manifest.metadata).toEqual({ built_by: "opa" });
  });

  it("accepts a bundle without a module (Rego target)", async () => {
    const bundle = await readBundle(await tarball({ "x.rego": source }));
    expect(bundle.wasm).toBeUndefined();
    expect(bundle.sources).toHaveLength(1);
  });

  it("keeps a __proto__ key in data as a key", async () => {
    const bundle = await readBundle(await tarball({ "data.json": '{"__proto__": {"polluted": true}}' }));
    expect(Object.hasOwn(bundle.data, "__proto__")).toBe(true);
    expect(Reflect.get({}, "polluted")).toBeUndefined();
  });
});

describe("the Rego version of a bundle's sources", () => {
  const { wasm, entrypoints } = compile();

  it("is the manifest's rego_version, overridden per file by file_rego_versions globs", async () => {
    const manifest = {
      revision: "r",
      rego_version: 0,
      file_rego_versions: { "/lib/*.rego": 1, "/v0/keep.rego": 0, "/a/**/new.rego": 1 },
    };
    const bundle = await readBundle(
      await tarball({
        "/.manifest": JSON.stringify(manifest),
        "/old.rego": source,
        "/lib/util.rego": source,
        "/lib/deep/util.rego": source,
        "/v0/keep.rego": source,
        "/a/b/c/new.rego": source,
      }),
    );
    // As OPA's globs without separators, `*` crosses `/`.
    expect(Object.fromEntries(bundle.sources.map((s) => [s.file, s.regoVersion]))).toEqual({
      "/old.rego": 0,
      "/lib/util.rego": 1,
      "/lib/deep/util.rego": 1,
      "/v0/keep.rego": 0,
      "/a/b/c/new.rego": 1,
    });
  });

  it("is left to the reader when the manifest says nothing", async () => {
    const bundle = await readBundle(await tarball({ "/x.rego": source }));
    expect(bundle.sources[0]!.regoVersion).toBeUndefined();
  });

  it("refuses a version other than 0 or 1 for a file, and a pattern that is no glob", async () => {
    const manifest = (versions: Record<string, number>) =>
      JSON.stringify({ revision: "r", file_rego_versions: versions });
    expect(
      await readError(await tarball({ "/.manifest": manifest({ "/x.rego": 2 }), "/x.rego": source })),
    ).toBe(".manifest: unknown Rego version 2 for /x.rego: rego_version and file_rego_versions take 0 or 1");
    expect(
      await readError(await tarball({ "/.manifest": manifest({ "/[x.rego": 0 }), "/x.rego": source })),
    ).toBe('.manifest: file_rego_versions names "/[x.rego", which is not a valid glob: fix the pattern');
  });

  it("is written by writeBundle: rego_version, and file_rego_versions for sources that differ", async () => {
    const packed = await writeBundle({
      wasm,
      entrypoints,
      regoVersion: 0,
      sources: [
        { file: "a.rego", source },
        { file: "b.rego", source, regoVersion: 1 },
        { file: "c.rego", source, regoVersion: 0 },
      ],
    });
    const bundle = await readBundle(packed);
    expect(bundle.manifest.rego_version).toBe(0);
    expect(bundle.manifest.file_rego_versions).toEqual({ "/b.rego": 1 });
    expect(bundle.sources.map((s) => s.regoVersion)).toEqual([0, 1, 0]);
  });
});

describe("readBundle errors", () => {
  const { wasm } = compile();

  it("says when the bytes are not a gzipped tar", async () => {
    expect(await readError(new Uint8Array())).toMatch(/empty/);
    expect(await readError(Buffer.from("hello, world"))).toMatch(/not a gzipped tar archive/);
    const plain = Buffer.alloc(1024);
    plain.write("ustar", 257, "latin1");
    expect(await readError(plain)).toMatch(/without gzip compression: compress it/);
  });

  it("says when the gzip data is truncated or corrupt", async () => {
    const packed = await tarball({ "/policy.wasm": wasm });
    expect(await readError(packed.subarray(0, packed.byteLength / 2))).toMatch(
      /truncated.*copy or download it again/,
    );
    const corrupt = Buffer.from(packed);
    corrupt.fill(0x55, 10, 60);
    expect(await readError(corrupt)).toMatch(/gzip data is corrupt \(.+\): copy or download it again/);
  });

  it("says when the tar inside is truncated", async () => {
    const whole = await tarOf({ "policy.wasm": wasm });
    expect(await readError(gzipSync(whole.subarray(0, 700)))).toMatch(/tar archive is truncated/);
  });

  it("rejects a bad manifest with what is wrong", async () => {
    expect(await readError(await tarball({ ".manifest": "{not json" }))).toMatch(
      /manifest is not valid JSON/,
    );
    expect(await readError(await tarball({ ".manifest": '{"revision": 7}' }))).toMatch(/revision: .*string/);
    expect(
      await readError(
        await tarball({
          ".manifest": JSON.stringify({ wasm: [{ entrypoint: "a/b", module: "/missing.wasm" }] }),
        }),
      ),
    ).toMatch(/names the Wasm module \/missing.wasm, which is not in the bundle/);
    expect(await readError(await tarball({ ".manifest": JSON.stringify({ roots: ["a", "a/b"] }) }))).toMatch(
      /overlap/,
    );
    expect(
      await readError(
        await tarball({ ".manifest": JSON.stringify({ roots: ["writ"] }), "other/data.json": "{}" }),
      ),
    ).toMatch(/data.other, outside its roots/);
  });

  it("rejects conflicting data files, delta bundles and paths that leave the bundle", async () => {
    expect(
      await readError(await tarball({ "data.json": '{"a": {"b": 1}}', "a/data.json": '{"b": 2}' })),
    ).toMatch(/data\.a\.b is already set/);
    expect(await readError(await tarball({ "data.json": "[1]" }))).toMatch(/must hold a JSON object/);
    expect(await readError(await tarball({ "x/data.json": "{" }))).toMatch(/\/x\/data.json: not valid JSON/);
    expect(await readError(await tarball({ "patch.json": "{}" }))).toMatch(/delta bundle/);
    expect(await readError(await tarball({ "../evil/data.json": "{}" }))).toMatch(/leaves the bundle/);
    expect(await readError(await tarball({ "a/policy.wasm": wasm, "b/policy.wasm": wasm }))).toMatch(
      /2 Wasm modules/,
    );
  });
});

describe("the revision", () => {
  it("is the sha256 of the files before the manifest", async () => {
    const { wasm, entrypoints } = compile();
    const written = await writeBundle({ wasm, entrypoints });
    const hash = createHash("sha256");
    for (const [name, content] of [
      ["/data.json", Buffer.from("{}")],
      ["/policy.wasm", Buffer.from(wasm)],
    ] as const) {
      hash.update(`${name}\0${content.byteLength}\0`);
      hash.update(content);
    }
    expect((await readBundle(written)).manifest.revision).toBe(hash.digest("hex"));
  });
});

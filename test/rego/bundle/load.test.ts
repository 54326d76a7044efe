import { gzipSync } from "node:zlib";
import tar from "tar-stream";
import { describe, expect, it } from "vitest";
import { buildPolicy } from "../../../src/rego/build.ts";
import { writeBundle } from "../../../src/rego/bundle/index.ts";
import {
  loadCompiledPolicy,
  loadPolicyFromBundle,
  moduleBuiltins,
  PolicyEvaluationError,
  PolicyLoadError,
} from "../../../src/rego/policy.ts";
import { Wasm } from "../../../src/rego/wasm/host.ts";

const source = `package writ

default allow := false

allow if input.user in data.roles.admins

decision := {"allow": allow, "greeting": sprintf("hello %v", [input.user]), "admin": regex.match("^a", input.user)}

conflict := x if { some x in [1, 2] }
`;

function compile(entrypoints: string[]) {
  const built = buildPolicy([{ file: "policy.rego", source }], { entrypoints });
  expect(built.errors).toEqual([]);
  return built;
}

async function opaLayout(files: Record<string, string | Uint8Array>): Promise<Uint8Array> {
  const pack = tar.pack();
  for (const [name, content] of Object.entries(files)) pack.entry({ name }, Buffer.from(content));
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) {
    if (!(chunk instanceof Uint8Array)) throw new Error("tar-stream gave a non-byte chunk");
    chunks.push(Buffer.from(chunk));
  }
  return gzipSync(Buffer.concat(chunks));
}

describe("loading policies into the SDK", () => {
  it("reads the host builtins from the module's builtins() export", () => {
    const built = compile(["writ/decision"]);
    expect(moduleBuiltins(new Wasm.Module(built.wasm!))).toEqual(built.hostBuiltins);
    expect(built.hostBuiltins.length).toBeGreaterThan(0);
  });

  it("evaluates a bundle written by writeBundle, with its data", async () => {
    const built = compile(["writ/decision", "writ/allow"]);
    const bundle = await writeBundle({
      wasm: built.wasm!,
      entrypoints: built.entrypoints,
      data: { roles: { admins: ["alice"] } },
    });
    const policy = await loadPolicyFromBundle(bundle);
    expect(policy.entrypoints).toEqual(["writ/decision", "writ/allow"]);
    expect(policy.evaluate({ user: "alice" }, "writ/decision")).toEqual([
      { result: { allow: true, greeting: "hello alice", admin: true } },
    ]);
    expect(policy.evaluate({ user: "bob" }, "writ/allow")).toEqual([{ result: false }]);
    policy.setData({ roles: { admins: ["bob"] } });
    expect(policy.evaluate({ user: "bob" }, "writ/allow")).toEqual([{ result: true }]);
  });

  it("evaluates a hand-made bundle in opa build layout (no manifest, nested data)", async () => {
    const built = compile(["writ/allow"]);
    const policy = await loadPolicyFromBundle(
      await opaLayout({ "/policy.wasm": built.wasm!, "/roles/data.json": '{"admins": ["carol"]}' }),
    );
    expect(policy.entrypoints).toEqual(["writ/allow"]);
    expect(policy.evaluate({ user: "carol" }, "writ/allow")).toEqual([{ result: true }]);
  });

  it("passes falsy inputs as input, and no input as undefined", async () => {
    const built = buildPolicy([{ file: "echo.rego", source: "package echo\n\nvalue := input\n" }], {
      entrypoints: ["echo/value"],
    });
    const policy = await loadCompiledPolicy({ wasm: built.wasm! });
    expect(policy.evaluate(false, "echo/value")).toEqual([{ result: false }]);
    expect(policy.evaluate(0, "echo/value")).toEqual([{ result: 0 }]);
    expect(policy.evaluate(undefined, "echo/value")).toEqual([]);
  });

  it("explains what is wrong", async () => {
    const built = compile(["writ/conflict"]);
    const policy = await loadCompiledPolicy({ wasm: built.wasm!, hostBuiltins: built.hostBuiltins });
    expect(() => policy.evaluate({}, "writ/missing")).toThrow(
      /no entrypoint writ\/missing \(it has writ\/conflict\): build it with -e writ\/missing/,
    );
    expect(() => policy.evaluate({}, "writ/conflict")).toThrow(PolicyEvaluationError);
    await expect(loadCompiledPolicy({ wasm: built.wasm!, hostBuiltins: ["http.send"] })).rejects.toThrow(
      /calls http.send, which Writ cannot run/,
    );
    await expect(loadCompiledPolicy({ wasm: new Uint8Array([1, 2, 3]) })).rejects.toThrow(PolicyLoadError);
    await expect(loadPolicyFromBundle(await opaLayout({ "p.rego": source }))).rejects.toThrow(
      /no policy.wasm .*Rego target/,
    );
    const manifest = JSON.stringify({ wasm: [{ entrypoint: "writ/other", module: "/policy.wasm" }] });
    await expect(
      loadPolicyFromBundle(await opaLayout({ "/policy.wasm": built.wasm!, "/.manifest": manifest })),
    ).rejects.toThrow(/lists entrypoint writ\/other, which policy.wasm does not export/);
  });
});

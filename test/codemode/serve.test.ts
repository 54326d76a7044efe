/**
 * `writ serve` from the checkout (sources through tsx) runs a Code Mode program and still exits
 * on SIGTERM: the sandbox's worker thread, started by the first run, ends with the gateway.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DevIssuer } from "../../src/identity/index.ts";
import { writeConfigFile } from "../support/config-file.ts";
import { startWrit, type WritProcess } from "../support/instances.ts";

let tmp: string | undefined;
let writ: WritProcess | undefined;

afterAll(async () => {
  await writ?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe("writ serve with Code Mode", () => {
  it("answers a run, then exits 0 on SIGTERM", async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "writ-codemode-serve-"));
    const config = await writeConfigFile(tmp);
    writ = await startWrit(config);
    const issuer = await DevIssuer.create({
      keyFile: path.join(tmp, ".writ/dev-issuer.json"),
      issuer: "writ-dev",
      audience: "writ",
    });
    const token = await issuer.mint({ sub: "alice", tenant: "demo", roles: ["developer"] });
    const response = await fetch(`${writ.url}/v1/run_code`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({
        code: `return (await tools.repo_read({ workspace: "ws-demo", path: "README.md" })).path;`,
      }),
    });
    expect(await response.json()).toMatchObject({ outcome: "returned", value: "README.md" });
    writ.child.kill("SIGTERM");
    const code = await new Promise<number | null>((resolve) => {
      if (writ?.child.exitCode !== null) resolve(writ?.child.exitCode ?? null);
      writ?.child.once("exit", (exitCode) => resolve(exitCode));
    });
    expect(code, writ.stderr()).toBe(0);
  });
});

/**
 * The README's Python example (examples/backend/verify_grant.py, PyJWT) verifies a real grant
 * issued by a real gateway over its published key set, and refuses the same grant for other
 * arguments. Skips, saying so, where no Python with PyJWT and cryptography is installed (Debian:
 * python3-jwt; the pyenv python3 on PATH here lacks it, /usr/bin/python3 has it).
 */
import { execFile, spawnSync } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { canonicalCall, onlyOutcome, README_ARGS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { repoRoot } from "../support/paths.ts";

const run = promisify(execFile);
const script = path.join(repoRoot, "examples/backend/verify_grant.py");

const python = ["python3", "/usr/bin/python3"].find(
  (candidate) => spawnSync(candidate, ["-c", "import jwt, cryptography"], { stdio: "ignore" }).status === 0,
);
if (python === undefined) {
  console.warn(
    "no python3 with PyJWT and cryptography (Debian: python3-jwt): the Python grant example is skipped",
  );
}

async function verify(
  gw: TestGateway,
  grant: string,
  args: unknown,
): Promise<{ code: number; stdout: string }> {
  const child = run(python ?? "python3", [script, gw.jwksUrl, "writ", "repo.read", JSON.stringify(args)]);
  child.child.stdin?.end(grant);
  try {
    const { stdout } = await child;
    return { code: 0, stdout };
  } catch (error) {
    const failed = z.object({ code: z.number(), stdout: z.string() }).parse(error);
    return failed;
  }
}

describe.skipIf(python === undefined)("verifying a grant from Python (PyJWT)", () => {
  let gw: TestGateway;
  let grant: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    const outcome = onlyOutcome(
      await gw.propose(await gw.token("alice"), {
        format: "canonical",
        payload: canonicalCall("repo.read", README_ARGS),
      }),
    );
    if (outcome.grant === undefined) throw new Error(`no grant: ${JSON.stringify(outcome)}`);
    grant = outcome.grant.token;
  });

  afterAll(async () => {
    await gw?.close();
  });

  it("accepts the grant for the arguments it was issued for, in any key order", async () => {
    const { code, stdout } = await verify(gw, grant, {
      path: README_ARGS.path,
      workspace: README_ARGS.workspace,
    });
    expect(code).toBe(0);
    const claims = z.object({ sub: z.string(), aud: z.string(), act: z.object({ name: z.string() }) });
    expect(claims.parse(JSON.parse(stdout))).toMatchObject({
      sub: "alice",
      aud: "writ",
      act: { name: "repo.read" },
    });
  });

  it("refuses it for other arguments", async () => {
    const { code, stdout } = await verify(gw, grant, { ...README_ARGS, path: ".env" });
    expect(code).toBe(1);
    expect(stdout).toContain("refused: the grant was issued for other arguments");
  });

  it("refuses a grant whose signature does not match", async () => {
    const [header, payload, signature = ""] = grant.split(".");
    const forged = `${header}.${payload}.${signature.startsWith("A") ? "B" : "A"}${signature.slice(1)}`;
    const { code, stdout } = await verify(gw, forged, README_ARGS);
    expect(code).toBe(1);
    expect(stdout).toContain("refused:");
  });
});

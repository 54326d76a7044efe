import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { WritError } from "../../src/core/errors.ts";
import { CredentialResolver, credentialsConfigSchema } from "../../src/dispatch/index.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "writ-cred-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function rejection(promise: Promise<unknown>): Promise<WritError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(WritError);
    return error as WritError;
  }
  throw new Error("expected a rejection");
}

describe("credentials config", () => {
  it("accepts env and file sources and rejects unknown fields", () => {
    expect(
      credentialsConfigSchema.safeParse({
        payments: { from: "env", env: "PAYMENTS_TOKEN" },
        crm: { from: "file", path: "/run/secrets/crm", header: "x-api-key" },
      }).success,
    ).toBe(true);
    expect(credentialsConfigSchema.safeParse({ p: { from: "env", env: "X", value: "s" } }).success).toBe(
      false,
    );
    expect(credentialsConfigSchema.safeParse({ p: { from: "vault", path: "x" } }).success).toBe(false);
  });
});

describe("CredentialResolver", () => {
  it("reads an env secret at resolve time as a Bearer authorization header", async () => {
    const env: Record<string, string | undefined> = {};
    const resolver = new CredentialResolver({ payments: { from: "env", env: "PAYMENTS_TOKEN" } }, { env });
    const operatorLog = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const missing = await rejection(resolver.resolve("payments")).finally(() => operatorLog.mockRestore());
    expect(missing.category).toBe("backend_unavailable");
    expect(JSON.stringify(missing.toJSON())).not.toContain("PAYMENTS_TOKEN");
    expect(missing.retryable).toBe(false);
    expect(missing.message).toContain('"payments"');
    env.PAYMENTS_TOKEN = "s3cr3t-token";
    expect(await resolver.resolve("payments")).toEqual({ authorization: "Bearer s3cr3t-token" });
  });

  it("uses a custom header without a scheme", async () => {
    const resolver = new CredentialResolver(
      { crm: { from: "env", env: "CRM_KEY", header: "X-Api-Key" } },
      { env: { CRM_KEY: "k-123" } },
    );
    expect(await resolver.resolve("crm")).toEqual({ "x-api-key": "k-123" });
  });

  it("re-reads a file when it changes and never shows its value in errors", async () => {
    const path = join(dir, "token");
    await writeFile(path, "first-secret\n");
    const resolver = new CredentialResolver({ payments: { from: "file", path } });
    expect(await resolver.resolve("payments")).toEqual({ authorization: "Bearer first-secret" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await writeFile(path, "second-secret-longer\n");
    expect(await resolver.resolve("payments")).toEqual({ authorization: "Bearer second-secret-longer" });

    await writeFile(path, "bad\nsecret-value");
    const multiline = await rejection(resolver.resolve("payments"));
    expect(multiline.message).not.toContain("secret-value");

    const gone = new CredentialResolver({ payments: { from: "file", path: join(dir, "absent") } });
    const operatorLog = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const error = await rejection(gone.resolve("payments"));
      expect(error.category).toBe("backend_unavailable");
      expect(error.message).toContain('"payments"');
      // Where the secret lives is for the operator's log, not for the caller.
      expect(JSON.stringify(error.toJSON())).not.toContain(dir);
      expect(String(operatorLog.mock.calls.at(-1)?.[0])).toContain(join(dir, "absent"));
    } finally {
      operatorLog.mockRestore();
    }
  });

  it("refuses an unknown ref", async () => {
    const error = await rejection(new CredentialResolver({}).resolve("nope"));
    expect(error.category).toBe("backend_unavailable");
    expect(error.retryable).toBe(false);
    expect(error.effectCommitted).toBe(false);
    expect(error.message).toContain('"nope"');
  });
});

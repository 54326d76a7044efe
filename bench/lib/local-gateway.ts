/**
 * A benchmark's gateway configuration: the embedded default with everything it writes (SQLite,
 * key files) in `dir`, on 127.0.0.1 with a port chosen at start, the development issuer on (its
 * key in `dir`, for minting the benchmark's tokens) and the policy folder unwatched; `overrides`
 * replaces whole sections.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { samplePoliciesDir } from "../../src/config/config.ts";
import { defaultConfigFile, type GatewayConfig, parseConfig } from "../../src/config/index.ts";
import { DevIssuer } from "../../src/identity/index.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export async function localGatewayConfig(
  dir: string,
  options: { policyDir?: string; overrides?: Record<string, unknown> } = {},
): Promise<GatewayConfig> {
  const document = z
    .record(z.string(), z.unknown())
    .parse(parseYaml(await readFile(defaultConfigFile, "utf8")));
  return parseConfig(
    {
      ...document,
      server: { host: "127.0.0.1", port: 0 },
      store: { sqlite: path.join(dir, "writ.db") },
      policy: { dir: options.policyDir ?? samplePoliciesDir, watch: false },
      identity: { dev_issuer: { enabled: true, key_file: path.join(dir, "dev.json") } },
      grants: { issuer: "writ", key_file: path.join(dir, "grants.json") },
      ...options.overrides,
    },
    root,
    "bench configuration",
  );
}

/** A token for `alice` (tenant demo, developer) from the development issuer of {@link localGatewayConfig}. */
export async function aliceToken(dir: string): Promise<string> {
  const dev = await DevIssuer.create({
    keyFile: path.join(dir, "dev.json"),
    issuer: "writ-dev",
    audience: "writ",
  });
  return dev.mint({ sub: "alice", tenant: "demo", roles: ["developer"], ttlSeconds: 3600 });
}

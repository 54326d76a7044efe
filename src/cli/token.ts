/**
 * `writ token --sub <id> [--tenant t] [--roles a,b] [--scopes x,y] [--ttl s] [--config file]`:
 * prints a subject JWT from the local development issuer that the default configuration trusts.
 * For trying Writ out; a production configuration does not enable that issuer.
 */
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../config/index.ts";
import { DevIssuer } from "../identity/dev-issuer.ts";

const usage = `usage: writ token --sub <id> [--tenant <t>] [--roles a,b] [--scopes x,y] [--ttl <seconds>] [--config <file>]

Prints a JWT from the development issuer of the configuration (the default one trusts it).`;

const list = (text: string | undefined) =>
  text
    ? text
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : [];

export async function tokenCommand(argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        sub: { type: "string" },
        tenant: { type: "string" },
        roles: { type: "string" },
        scopes: { type: "string" },
        ttl: { type: "string" },
        config: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    console.error(`writ token: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return 2;
  }
  if (values.help === true) {
    console.log(usage);
    return 0;
  }
  const sub = typeof values.sub === "string" ? values.sub : undefined;
  if (!sub) {
    console.error(`writ token: --sub is required\n\n${usage}`);
    return 2;
  }
  const ttl = typeof values.ttl === "string" ? Number(values.ttl) : 3600;
  if (!(Number.isInteger(ttl) && ttl > 0 && ttl <= 86_400)) {
    console.error("writ token: --ttl must be a whole number of seconds from 1 to 86400");
    return 2;
  }
  let config: Awaited<ReturnType<typeof loadConfig>>;
  try {
    config = await loadConfig(typeof values.config === "string" ? values.config : undefined);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`writ token: ${error.message}`);
      return 1;
    }
    throw error;
  }
  const dev = config.identity.dev_issuer;
  if (!dev.enabled) {
    console.error(
      "writ token: this configuration does not enable the development issuer (identity.dev_issuer.enabled)",
    );
    return 1;
  }
  const issuer = await DevIssuer.create({
    keyFile: dev.key_file,
    issuer: dev.issuer,
    audience: dev.audience,
  });
  const token = await issuer.mint({
    sub,
    tenant: typeof values.tenant === "string" ? values.tenant : "demo",
    roles: list(typeof values.roles === "string" ? values.roles : undefined),
    scopes: list(typeof values.scopes === "string" ? values.scopes : undefined),
    ttlSeconds: ttl,
  });
  console.log(token);
  return 0;
}

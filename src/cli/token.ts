/**
 * `writ token --sub <id> [--tenant t] [--roles a,b] [--scopes x,y] [--ttl s] [--config file]`:
 * prints a subject JWT from the local development issuer that the default configuration trusts.
 * For trying Writ out; a production configuration does not enable that issuer.
 */
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../config/index.ts";
import { DevIssuer } from "../identity/dev-issuer.ts";

const usage = `usage: writ token --sub <id> [--tenant <t>] [--roles a,b] [--scopes x,y] [--ttl <seconds>] [--config <file>]

Prints a bearer JWT from the configuration's development issuer (identity.dev_issuer), which the
same configuration's gateway trusts: the embedded default enables it, with its key in
.writ/dev-issuer.json (created on first use). For trying Writ out; production configurations
trust their identity provider instead. Use it as "authorization: Bearer <token>", or paste it
into the console's sign-in page.

options:
      --sub <id>       the subject (required): input.subject.id in the policy
      --tenant <t>     the subject's tenant (the tnt claim; default demo)
      --roles a,b      roles, comma-separated (the console needs reviewer, or an approver role
                       such as maintainer)
      --scopes x,y     scopes, comma-separated (the scope claim)
      --ttl <seconds>  lifetime, 1 to 86400 (default 3600)
      --config <file>  the configuration whose issuer signs it (default: the embedded one, as
                       writ serve); its key_file is relative to the file
  -h, --help           show this text`;

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

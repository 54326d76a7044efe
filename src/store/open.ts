/**
 * Opens the store a configuration names. SQLite is the embedded default; every command that
 * reads or writes Writ's state (the gateway, `writ logs`, …) opens it here so they agree.
 *
 * `WRIT_DATABASE_URL` in the environment, when set, selects PostgreSQL and wins over the
 * configuration's `store` section (so one configuration file serves every instance and the
 * database credentials can come from the deployment's secrets).
 */
import { WritError } from "../core/errors.ts";
import type { StoreBackends } from "./backend.ts";
import { postgresConfigSchema, type StoreConfig } from "./config.ts";
import { postgresBackend } from "./postgres.ts";
import { sqliteBackend } from "./sqlite.ts";
import type { Store } from "./types.ts";

/** The backends, by the kind of `store` section each serves. */
const backends: StoreBackends = { sqlite: sqliteBackend, postgres: postgresBackend };

export const DATABASE_URL_VARIABLE = "WRIT_DATABASE_URL";

/** The PostgreSQL settings in effect (environment first), or undefined for SQLite. */
export function postgresSettings(
  config: StoreConfig,
  env: NodeJS.ProcessEnv = process.env,
): { url: string; max_connections: number } | undefined {
  const fromEnv = env[DATABASE_URL_VARIABLE];
  if (fromEnv === undefined || fromEnv === "") return config.postgres;
  const parsed = postgresConfigSchema.safeParse({
    url: fromEnv,
    max_connections: config.postgres?.max_connections ?? 10,
  });
  if (!parsed.success) {
    throw new WritError("invalid_argument", `${DATABASE_URL_VARIABLE} is not a PostgreSQL URL`, {
      suggestedFix: `set ${DATABASE_URL_VARIABLE} to a postgres:// URL (e.g. postgres://writ:secret@db:5432/writ), or unset it to use the configuration's store`,
    });
  }
  return parsed.data;
}

export async function openStore(config: StoreConfig, env: NodeJS.ProcessEnv = process.env): Promise<Store> {
  const postgres = postgresSettings(config, env);
  const effective: StoreConfig = postgres === undefined ? config : { postgres };
  for (const backend of Object.values(backends)) {
    const opened = backend.openConfigured(effective);
    if (opened !== undefined) return opened;
  }
  throw new Error("store config invariant broken: no backend serves it");
}

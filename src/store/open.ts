/**
 * Opens the store a configuration names. SQLite is the embedded default; every command that
 * reads or writes Writ's state (the gateway, `writ logs`, …) opens it here so they agree.
 */
import type { GatewayConfig } from "../config/index.ts";
import { SqliteStore } from "./sqlite.ts";
import type { Store } from "./types.ts";

export async function openStore(config: GatewayConfig["store"]): Promise<Store> {
  return SqliteStore.open(config.sqlite);
}

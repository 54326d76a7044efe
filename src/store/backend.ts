/**
 * A store backend: the kind of `store` section it serves (`sqlite`, `postgres`: the section's
 * key) and how it opens a store from that section's settings. Each backend module declares its
 * own (`sqliteBackend` in sqlite.ts, `postgresBackend` in postgres.ts); open.ts keys them by
 * kind, and the type of that table fails to compile while a kind the configuration allows has
 * no backend.
 */
import type { StoreConfig } from "./config.ts";
import type { Store } from "./types.ts";

/** The kinds of store the configuration names: the keys of its `store` section. */
export type StoreKind = keyof StoreConfig;

/** The settings of one kind, as the configuration gives them. */
export type StoreSettings<K extends StoreKind> = NonNullable<StoreConfig[K]>;

export interface StoreBackend<K extends StoreKind = StoreKind> {
  readonly kind: K;
  /** Opens the store `config` names, migrated; undefined when it names another kind. */
  openConfigured(config: StoreConfig): Promise<Store> | undefined;
}

/** Every kind's backend. */
export type StoreBackends = { readonly [K in StoreKind]: StoreBackend<K> };

/** The backend of `kind`, opening a store from that kind's settings with `open`. */
export function storeBackend<K extends StoreKind>(
  kind: K,
  open: (settings: StoreSettings<K>) => Promise<Store>,
): StoreBackend<K> {
  return {
    kind,
    openConfigured(config) {
      const settings = config[kind];
      return settings == null ? undefined : open(settings);
    },
  };
}

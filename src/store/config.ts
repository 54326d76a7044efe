/**
 * The `store` section of the gateway configuration: SQLite (the embedded default) or PostgreSQL
 * (several instances sharing one database). `WRIT_DATABASE_URL` in the environment wins over
 * both (see `openStore`).
 */
import { z } from "zod";

export const DEFAULT_SQLITE_FILE = ".writ/writ.db";

const postgresUrlSchema = z
  .string()
  .min(1)
  .refine((url) => /^postgres(ql)?:\/\//.test(url), {
    message: "expected a postgres:// or postgresql:// URL, e.g. postgres://writ:secret@db.internal:5432/writ",
  });

export const postgresConfigSchema = z
  .object({
    url: postgresUrlSchema.meta({
      description:
        "Connection URL, e.g. postgres://writ:secret@db.internal:5432/writ. The environment variable WRIT_DATABASE_URL, when set, wins over it.",
    }),
    max_connections: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(10)
      .meta({ description: "Connections this instance keeps in its pool." }),
  })
  .strict();
export type PostgresConfig = z.output<typeof postgresConfigSchema>;

export const storeConfigSchema = z
  .object({
    sqlite: z
      .string()
      .min(1)
      .optional()
      .meta({
        description: `SQLite database file: the embedded default for one instance (${DEFAULT_SQLITE_FILE} when neither sqlite nor postgres is given). Mutually exclusive with postgres.`,
      }),
    postgres: postgresConfigSchema.optional().meta({
      description:
        "PostgreSQL shared by several Writ instances behind a load balancer (grants, approvals, idempotency keys, the decision log and the grant signing keys). Mutually exclusive with sqlite. WRIT_DATABASE_URL in the environment selects PostgreSQL too, and wins over this section.",
    }),
  })
  .strict()
  .refine((store) => store.sqlite === undefined || store.postgres === undefined, {
    message: "give either store.sqlite or store.postgres, not both",
  })
  .transform(
    (store): { sqlite: string; postgres?: undefined } | { postgres: PostgresConfig; sqlite?: undefined } =>
      store.postgres === undefined
        ? { sqlite: store.sqlite ?? DEFAULT_SQLITE_FILE }
        : { postgres: store.postgres },
  )
  .meta({ description: "Where Writ keeps its state: SQLite (one instance) or PostgreSQL (several)." });
export type StoreConfig = z.output<typeof storeConfigSchema>;

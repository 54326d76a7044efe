/** A test gateway on either store: SQLite (its default), or a PostgreSQL database of its own. */
import { startTestGateway, type TestGateway } from "./gateway.ts";
import { startTestPostgres } from "./postgres.ts";

export type StoreKind = "sqlite" | "postgres";

/** Starts a gateway on `kind` (on PostgreSQL, in a fresh database named `database`); `stop` ends both. */
export async function startGatewayOn(
  kind: StoreKind,
  database: string,
): Promise<{ gw: TestGateway; stop: () => Promise<void> }> {
  if (kind === "sqlite") {
    const gw = await startTestGateway();
    return { gw, stop: () => gw.close() };
  }
  const postgres = await startTestPostgres();
  try {
    const url = await postgres.createDatabase(database);
    const gw = await startTestGateway({
      configure: (document) => ({ ...document, store: { postgres: { url } } }),
    });
    return {
      gw,
      stop: async () => {
        await gw.close();
        await postgres.stop();
      },
    };
  } catch (error) {
    await postgres.stop();
    throw error;
  }
}

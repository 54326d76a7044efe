/**
 * Vitest's global setup (vitest.config.ts), in its main process: what the test files of one run
 * share, made before the first file starts and ended after the last. The workers inherit the
 * environment it sets.
 *
 * - `WRIT_TEST_POSTGRES_BROKER`: where the files get the run's PostgreSQL server
 *   (test/support/postgres-broker.ts), started only if a file asks for one.
 */

import { WRIT_TEST_POSTGRES_BROKER } from "./postgres.ts";
import { startPostgresBroker } from "./postgres-broker.ts";

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  // Each project of the configuration runs it: the first one's serves them all.
  if (process.env[WRIT_TEST_POSTGRES_BROKER] !== undefined) return undefined;
  const broker = await startPostgresBroker();
  process.env[WRIT_TEST_POSTGRES_BROKER] = broker.url;
  return async () => {
    delete process.env[WRIT_TEST_POSTGRES_BROKER];
    await broker.close();
  };
}

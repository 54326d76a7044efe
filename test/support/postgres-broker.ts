/**
 * The run's PostgreSQL server, shared by the test files (test/support/postgres.ts): an HTTP
 * server on 127.0.0.1 that starts one PostgreSQL server on the first request and answers every
 * request with `{ adminUrl }` (or `{ error }` when it could not start; the next request tries
 * again). It runs in vitest's main process (test/support/global-setup.ts), so the server lives
 * as long as the run, whichever worker asked first, and a run that asks for none starts none.
 */
import { createServer } from "node:http";
import { startPostgresServer, type TestPostgres } from "./postgres.ts";

export interface PostgresBroker {
  /** The URL the test files ask (the value of WRIT_TEST_POSTGRES_BROKER). */
  url: string;
  /** Stops the broker, and the server if it started one. */
  close(): Promise<void>;
}

export async function startPostgresBroker(): Promise<PostgresBroker> {
  let started: Promise<TestPostgres> | undefined;
  const server = createServer((request, response) => {
    request.resume();
    started ??= startPostgresServer();
    const answer = (status: number, body: unknown) =>
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    started.then(
      (postgres) => answer(200, { adminUrl: postgres.adminUrl }),
      (error: unknown) => {
        started = undefined;
        answer(500, { error: error instanceof Error ? error.message : String(error) });
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the PostgreSQL broker has no port");
  return {
    url: `http://127.0.0.1:${address.port}/`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      const postgres = await started?.catch(() => undefined);
      await postgres?.stop();
    },
  };
}

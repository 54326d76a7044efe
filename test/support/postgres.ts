/**
 * A throwaway PostgreSQL server for tests: `initdb` into a temp folder, `postgres` on 127.0.0.1
 * on a port chosen at run time (fsync off), stopped and removed afterwards. Runs the binaries as
 * the `postgres` OS user when the tests run as root (initdb refuses root).
 *
 * - `WRIT_TEST_DATABASE_URL` set: that server is used instead (nothing is started).
 * - Under `npm test`: one server for the whole run, started when a file first asks for it and
 *   stopped after the last file ({@link WRIT_TEST_POSTGRES_BROKER}, test/support/global-setup.ts):
 *   `initdb` and a start cost seconds each, several times over when every file started its own.
 * - No PostgreSQL binaries and no URL: {@link postgresUnavailable} says why, and the PostgreSQL
 *   tests skip (`.ci/run` installs Debian's `postgresql`, so CI runs them).
 *
 * Each test file asks for its own database ({@link TestPostgres.createDatabase}), so files run in
 * parallel without seeing each other's rows.
 */
import { execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { z } from "zod";
import { freePort } from "./ports.ts";

const run = promisify(execFile);

const BIN_ROOT = "/usr/lib/postgresql";

function binDir(): string | undefined {
  if (!existsSync(BIN_ROOT)) return undefined;
  const versions = readdirSync(BIN_ROOT)
    .filter((name) => /^\d+$/.test(name) && existsSync(path.join(BIN_ROOT, name, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  const newest = versions[0];
  return newest === undefined ? undefined : path.join(BIN_ROOT, newest, "bin");
}

/** Why the PostgreSQL tests cannot run here, or undefined when they can. */
export const postgresUnavailable: string | undefined =
  process.env.WRIT_TEST_DATABASE_URL !== undefined || binDir() !== undefined
    ? undefined
    : `no PostgreSQL server binaries under ${BIN_ROOT} and WRIT_TEST_DATABASE_URL is not set: install Debian's postgresql (.ci/run does) or point WRIT_TEST_DATABASE_URL at a server`;

export interface TestPostgres {
  /** A URL of the server's `postgres` database (superuser). */
  adminUrl: string;
  /**
   * Creates a fresh database and returns its URL: empty, or a copy of `template` (the URL of a
   * database of this server that nobody is connected to), e.g. one migrated once for many tests.
   */
  createDatabase(prefix?: string, template?: string): Promise<string>;
  stop(): Promise<void>;
}

/** Runs one statement on its own connection (tests inspect or tamper with rows this way). */
export async function sql(url: string, text: string, params: unknown[] = []): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

function asPostgresUser(command: string, args: string[]): [string, string[]] {
  return process.geteuid?.() === 0
    ? ["runuser", ["-u", "postgres", "--", command, ...args]]
    : [command, args];
}

const versionSchema = z.object({ server_version_num: z.coerce.number() });

async function createDatabaseOn(adminUrl: string, prefix: string, template?: string): Promise<string> {
  const name = `${prefix}_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    let copy = "";
    if (template !== undefined) {
      const source = new URL(template).pathname.slice(1);
      if (!/^\w+$/.test(source)) throw new Error(`not a database of the test server: ${template}`);
      const [row] = (await client.query("SHOW server_version_num")).rows;
      // PostgreSQL 15+ copies a small database's files faster than it logs each of its blocks.
      const fileCopy = versionSchema.parse(row).server_version_num >= 150000;
      copy = ` TEMPLATE ${source}${fileCopy ? " STRATEGY FILE_COPY" : ""}`;
    }
    await client.query(`CREATE DATABASE ${name}${copy}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export interface TestPostgresOptions {
  /**
   * Keep PostgreSQL's durability settings (fsync, synchronous_commit): for benchmarks that compare
   * it with SQLite syncing every commit. Tests turn them off (default), which is faster.
   */
  durable?: boolean;
}

/**
 * The environment variable holding the URL of the run's PostgreSQL broker: an HTTP server on
 * 127.0.0.1 in vitest's main process that starts one server on the first request and answers
 * every request with its admin URL (test/support/postgres-broker.ts).
 */
export const WRIT_TEST_POSTGRES_BROKER = "WRIT_TEST_POSTGRES_BROKER";

/** A server this process does not own: {@link TestPostgres.stop} leaves it running. */
function attached(adminUrl: string): TestPostgres {
  return {
    adminUrl,
    createDatabase: (prefix = "writ_test", template) => createDatabaseOn(adminUrl, prefix, template),
    stop: async () => {},
  };
}

/** The admin URL of the run's server, from the broker at `broker` (which starts it if need be). */
async function brokeredAdminUrl(broker: string): Promise<string> {
  const response = await fetch(broker);
  const answer = z.object({ adminUrl: z.string() }).or(z.object({ error: z.string() }));
  const body = answer.parse(await response.json());
  if ("error" in body) throw new Error(`the run's PostgreSQL server did not start:\n${body.error}`);
  return body.adminUrl;
}

/**
 * A server for a test file: `WRIT_TEST_DATABASE_URL`'s, else the run's (shared, see above), else
 * (outside `npm test`, or `durable`) one of its own.
 */
export async function startTestPostgres(options: TestPostgresOptions = {}): Promise<TestPostgres> {
  const given = process.env.WRIT_TEST_DATABASE_URL;
  if (given !== undefined) return attached(given);
  const broker = process.env[WRIT_TEST_POSTGRES_BROKER];
  if (broker !== undefined && broker !== "" && options.durable !== true) {
    return attached(await brokeredAdminUrl(broker));
  }
  return startPostgresServer(options);
}

/** Starts a server of its own, in a temp folder; `stop` ends it and removes the folder. */
export async function startPostgresServer(options: TestPostgresOptions = {}): Promise<TestPostgres> {
  const bin = binDir();
  if (bin === undefined) throw new Error(postgresUnavailable);
  const root = mkdtempSync(path.join(tmpdir(), "writ-pg-"));
  const data = path.join(root, "data");
  const socket = path.join(root, "socket");
  mkdirSync(socket);
  if (process.geteuid?.() === 0) {
    const [uid, gid] = await postgresIds();
    chownSync(root, uid, gid);
    chownSync(socket, uid, gid);
  }
  chmodSync(root, 0o700);
  const initdb = asPostgresUser(path.join(bin, "initdb"), [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth=trust",
    "--no-sync",
    "-E",
    "UTF8",
    "--locale=C",
  ]);
  await run(initdb[0], initdb[1]);
  const port = await freePort();
  const [command, args] = asPostgresUser(path.join(bin, "postgres"), [
    "-D",
    data,
    "-p",
    String(port),
    "-k",
    socket,
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "max_connections=200",
    ...(options.durable
      ? []
      : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]),
  ]);
  const server = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"], detached: false });
  let log = "";
  server.stderr.on("data", (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const client = new pg.Client({ connectionString: adminUrl });
    try {
      await client.connect();
      await client.end();
      break;
    } catch {
      await client.end().catch(() => {});
      if (server.exitCode !== null || Date.now() > deadline) {
        server.kill("SIGKILL");
        rmSync(root, { recursive: true, force: true });
        throw new Error(`the test PostgreSQL server did not start:\n${log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    adminUrl,
    createDatabase: (prefix = "writ_test", template) => createDatabaseOn(adminUrl, prefix, template),
    async stop() {
      // SIGQUIT to the postmaster (not to runuser, which does not pass it on): immediate
      // shutdown, no checkpoint (the data folder is thrown away).
      const postmaster = Number(readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
      if (server.exitCode === null && Number.isSafeInteger(postmaster) && postmaster > 0) {
        process.kill(postmaster, "SIGQUIT");
      }
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      if (server.exitCode === null) server.kill("SIGKILL");
      rmSync(root, { recursive: true, force: true });
    },
  };
}

async function postgresIds(): Promise<[number, number]> {
  const uid = Number((await run("id", ["-u", "postgres"])).stdout.trim());
  const gid = Number((await run("id", ["-g", "postgres"])).stdout.trim());
  return [uid, gid];
}

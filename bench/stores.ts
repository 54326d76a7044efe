/**
 * `WRIT_BENCH_STORE=postgres npx tsx bench/gateway.ts [--seconds n] [--connections n]`: POST /v1/proposals
 * under autocannon against real `writ serve` processes, in the same run:
 *
 * - SQLite, one instance (the embedded default, synchronous=FULL);
 * - PostgreSQL, one instance;
 * - PostgreSQL, two instances sharing the database (autocannon splits the connections).
 *
 * PostgreSQL is WRIT_DATABASE_URL when set (a fresh database there is not created: give it an
 * empty one), otherwise a throwaway server on loopback with its durability settings on (fsync,
 * synchronous_commit), so that both stores make every acknowledged entry durable.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { defaultConfigFile } from "../src/config/index.ts";
import { DecisionLog } from "../src/decisionlog/index.ts";
import { DevIssuer } from "../src/identity/index.ts";
import { openStore } from "../src/store/index.ts";
import { startWrit, type WritProcess } from "../test/support/instances.ts";
import { startTestPostgres, type TestPostgres } from "../test/support/postgres.ts";
import { type LoadResult, runLoad } from "./lib/load.ts";
import { proposalBody } from "./proposal.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const body = proposalBody;

/** Load on every instance at once, the connections split between them; percentiles of the slowest. */
async function load(
  instances: WritProcess[],
  token: string,
  seconds: number,
  connections: number,
): Promise<LoadResult> {
  const headers = { "content-type": "application/json", authorization: `Bearer ${token}` };
  const share = Math.max(1, Math.floor(connections / instances.length));
  const results = await Promise.all(
    instances.map((instance) =>
      runLoad({ url: `${instance.url}/v1/proposals`, headers, body, connections: share, seconds }),
    ),
  );
  const sum = (key: keyof LoadResult) => results.reduce((total, r) => total + r[key], 0);
  const slowest = (key: keyof LoadResult) => Math.max(...results.map((r) => r[key]));
  return {
    rps: sum("rps"),
    p50: slowest("p50"),
    p97_5: slowest("p97_5"),
    p99: slowest("p99"),
    p99_9: slowest("p99_9"),
    max: slowest("max"),
    errors: sum("errors"),
    non2xx: sum("non2xx"),
    requests: sum("requests"),
  };
}

export async function compareStores(seconds: number, connections: number): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "writ-bench-stores-"));
  let server: TestPostgres | undefined;
  const running: WritProcess[] = [];
  try {
    const given = process.env.WRIT_DATABASE_URL;
    if (given === undefined || given === "") server = await startTestPostgres({ durable: true });
    const databaseUrl = server ? await server.createDatabase("writ_bench") : (given ?? "");

    const defaults = z
      .record(z.string(), z.unknown())
      .parse(parseYaml(await readFile(defaultConfigFile, "utf8")));
    const devKeyFile = path.join(dir, "dev.json");
    const dev = await DevIssuer.create({ keyFile: devKeyFile, issuer: "writ-dev", audience: "writ" });
    const token = await dev.mint({ sub: "alice", tenant: "demo", roles: ["developer"] });
    const configFor = async (name: string, store: unknown) => {
      const file = path.join(dir, `${name}.json`);
      await writeFile(
        file,
        JSON.stringify({
          ...defaults,
          server: { host: "127.0.0.1", port: 0 },
          store,
          policy: { dir: path.join(root, "policies"), watch: false },
          identity: { issuers: [], dev_issuer: { enabled: true, key_file: devKeyFile } },
          grants: { issuer: "writ", key_file: path.join(dir, `${name}-grant-keys.json`) },
        }),
      );
      return file;
    };
    const sqliteConfig = await configFor("sqlite", { sqlite: path.join(dir, "writ.db") });
    const postgresConfig = await configFor("postgres", {
      postgres: { url: databaseUrl, max_connections: 10 },
    });

    const scenarios = [
      { name: "SQLite, 1 instance", config: sqliteConfig, instances: 1 },
      { name: "PostgreSQL, 1 instance", config: postgresConfig, instances: 1 },
      { name: "PostgreSQL, 2 instances", config: postgresConfig, instances: 2 },
    ];
    const rows: Array<{ name: string; load: LoadResult }> = [];
    for (const scenario of scenarios) {
      const instances = await Promise.all(
        Array.from({ length: scenario.instances }, () => startWrit(scenario.config)),
      );
      running.push(...instances);
      for (const instance of instances) {
        const probe = await fetch(`${instance.url}/v1/proposals`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body,
        });
        const text = await probe.text();
        if (!probe.ok || !text.includes('"decision":"allow"'))
          throw new Error(`${scenario.name}: the proposal route did not allow: ${text}`);
      }
      // Fresh processes: warm their JIT up before measuring.
      await load(instances, token, Math.max(1, Math.round(seconds / 5)), connections);
      rows.push({ name: scenario.name, load: await load(instances, token, seconds, connections) });
      await Promise.all(instances.map((instance) => instance.stop()));
      running.length = 0;
    }

    const logs = [];
    for (const store of [
      { sqlite: path.join(dir, "writ.db") },
      { postgres: { url: databaseUrl, max_connections: 2 } },
    ]) {
      const opened = await openStore(store, {});
      try {
        const verified = await new DecisionLog(opened).verify();
        logs.push(verified.ok ? `intact, ${verified.entries} entries` : "BROKEN");
      } finally {
        await opened.close();
      }
    }

    const base = rows[0]?.load;
    console.log(
      `autocannon: ${connections} connections in all, ${seconds} s per run, writ serve child processes`,
    );
    for (const { name, load: r } of rows) {
      const ratio = base ? (r.rps / base.rps).toFixed(2) : "-";
      console.log(
        `${name.padEnd(26)}${r.rps.toFixed(0).padStart(7)} req/s  (${ratio} x SQLite)   p50 ${String(r.p50).padStart(4)} ms   p99 ${String(r.p99).padStart(4)} ms   errors ${r.errors + r.non2xx}`,
      );
    }
    console.log(`decision logs after the runs: SQLite ${logs[0]}; PostgreSQL ${logs[1]}`);
    const [sqlite, one, two] = rows.map((row) => row.load.rps);
    if (sqlite !== undefined && one !== undefined && two !== undefined) {
      console.log(
        `closing note: PostgreSQL serves ${(one / sqlite).toFixed(2)}x SQLite's throughput on one instance; two instances serve ${(two / one).toFixed(2)}x one instance (${(two / sqlite).toFixed(2)}x SQLite).`,
      );
    }
    const cores = availableParallelism();
    if (cores < 4) {
      console.log(
        `note: ${cores} CPU cores here, shared by both instances, PostgreSQL and autocannon: this run measures the cost of sharing state, not the capacity two machines add.`,
      );
    }
  } finally {
    await Promise.all(running.map((instance) => instance.stop()));
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

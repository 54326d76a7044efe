/**
 * Run as a separate process by sqlite.test.ts: waits until a shared start time, then opens (and
 * migrates) the same database file as its siblings and appends entries, racing them.
 */
import { SqliteStore } from "../../src/store/index.ts";
import { newEntry } from "./fixtures.ts";

const [file, startAt, count, name] = process.argv.slice(2);
if (file === undefined || startAt === undefined || count === undefined || name === undefined) {
  throw new Error("usage: concurrent-child.ts <db file> <start at (ms since epoch)> <appends> <name>");
}
const wait = Number(startAt) - Date.now();
if (wait > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, wait);
const store = await SqliteStore.open(file);
for (let i = 0; i < Number(count); i++) {
  await store.appendDecision(newEntry({ subject: name, request_id: `${name}-${i}` }));
}
await store.close();

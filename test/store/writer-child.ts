/**
 * Run as a separate process by sqlite-writer.test.ts: appends through the writer thread and
 * never closes the store, then prints what it appended. The process must end by itself.
 */
import { SqliteStore } from "../../src/store/index.ts";
import { newEntry } from "./fixtures.ts";

const [file] = process.argv.slice(2);
if (file === undefined) throw new Error("usage: writer-child.ts <db file>");
const store = await SqliteStore.open(file);
const entries = await Promise.all(Array.from({ length: 20 }, () => store.appendDecision(newEntry())));
process.stdout.write(`${store.writer} ${entries.length}\n`);

/**
 * `writ policy fmt --v0-v1` over every folder of the Gatekeeper library (Rego v0): each folder's
 * files converted to Rego v1 in a temporary folder, every converted file parsed as v1, and the
 * folder's tests run from the v0 files (`--v0-compatible`) and from the converted ones. Prints
 * each folder that differs and the totals; exits 1 when any file or test differs.
 *
 *   npx tsx bench/fmt-v0-v1.ts [<library src folder>]
 *
 * Run on purpose, never from `npm test` (test/rego/format/v0-v1.test.ts runs a few folders).
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { convertFolder, statusChanges } from "../test/support/v0-v1.ts";

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const src = path.resolve(
  process.argv[2] ?? path.join(repositoryRoot, "../shared/corpora/gatekeeper-library/src"),
);

const out = await mkdtemp(path.join(tmpdir(), "writ-v0-v1-"));
let files = 0;
let folders = 0;
let tests = 0;
let same = 0;
let problems = 0;
try {
  for (const group of (await readdir(src, { withFileTypes: true })).filter((e) => e.isDirectory())) {
    const entries = await readdir(path.join(src, group.name), { withFileTypes: true });
    for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
      const folder = path.join(group.name, entry.name);
      const conversion = await convertFolder(path.join(src, folder), path.join(out, folder));
      const changes = statusChanges(conversion);
      folders++;
      files += conversion.files;
      tests += conversion.v0.size;
      same += conversion.v0.size - changes.filter((c) => !c.includes(": absent →")).length;
      problems += conversion.problems.length;
      if (changes.length > 0 || conversion.problems.length > 0) {
        console.log(`${folder}:\n  ${[...conversion.problems, ...changes].join("\n  ")}`);
      }
    }
  }
} finally {
  await rm(out, { recursive: true, force: true });
}
console.log(
  `${folders} folders, ${files} files converted with --v0-v1 (${problems} not v1); ` +
    `${same}/${tests} tests with the same result from the v1 files as from the v0 files`,
);
process.exitCode = problems === 0 && same === tests ? 0 : 1;

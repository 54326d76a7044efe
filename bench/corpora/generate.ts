/**
 * Writes a synthetic corpus shaped like trivy-checks (checks with `deny contains res` rules over
 * a structured input, a library package they import, a test file beside each check), for
 * bench/corpus.ts at the size of a real one when the real one is not at hand:
 *
 *   npx tsx bench/corpora/generate.ts <folder> [checks (default 550)]
 *
 * Each check has a policy file and a test file with four tests (two files, four tests per check:
 * 550 checks are 1,101 files and 2,200 tests). Calls `result.new`, a custom builtin, so run it
 * with `--builtins bench/corpora/trivy-builtins.mjs`.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

const [dir, countText] = process.argv.slice(2);
if (!dir) {
  console.error("usage: npx tsx bench/corpora/generate.ts <folder> [checks]");
  process.exit(2);
}
const checks = Number(countText ?? 550);

const lib = `package lib.gen

import rego.v1

resources contains r if {
\tsome r in input.resources
}

tagged(r, key) if r.tags[key] != ""

port_open(r, port) if {
\tsome rule in r.ingress
\trule.from_port <= port
\tport <= rule.to_port
}
`;

function check(i: number): string {
  const port = 1000 + (i % 60000);
  return `# METADATA
# title: generated check ${i}
# custom:
#   id: GEN${i}
package builtin.gen.GEN${i}

import rego.v1

import data.lib.gen

deny contains res if {
\tsome r in gen.resources
\tr.kind == "kind_${i % 17}"
\tnot gen.tagged(r, "owner")
\tres := result.new(sprintf("resource %s of kind_${i % 17} has no owner", [r.name]), r)
}

deny contains res if {
\tsome r in gen.resources
\tgen.port_open(r, ${port})
\tcount({t | some t in object.keys(r.tags); startswith(t, "allow_")}) == 0
\tres := result.new(sprintf("resource %s opens port ${port}", [r.name]), r)
}
`;
}

function tests(i: number): string {
  const kind = `kind_${i % 17}`;
  const port = 1000 + (i % 60000);
  return `package builtin.gen.GEN${i}_test

import rego.v1

import data.builtin.gen.GEN${i} as check

test_untagged_denied if {
\tr := check.deny with input as {"resources": [{"name": "a", "kind": "${kind}", "tags": {}}]}
\tcount(r) == 1
\tsome x in r
\tx.msg == "resource a of ${kind} has no owner"
}

test_tagged_allowed if {
\tr := check.deny with input as {"resources": [{"name": "a", "kind": "${kind}", "tags": {"owner": "me"}}]}
\tcount(r) == 0
}

test_open_port_denied if {
\tr := check.deny with input as {"resources": [{"name": "b", "kind": "other", "tags": {}, "ingress": [{"from_port": ${port - 1}, "to_port": ${port + 1}}]}]}
\tcount(r) == 1
}

test_open_port_allowed_by_tag if {
\tr := check.deny with input as {"resources": [{"name": "b", "kind": "other", "tags": {"allow_${i}": "yes"}, "ingress": [{"from_port": ${port}, "to_port": ${port}}]}]}
\tcount(r) == 0
}
`;
}

await mkdir(path.join(dir, "lib"), { recursive: true });
await writeFile(path.join(dir, "lib", "gen.rego"), lib);
for (let i = 0; i < checks; i++) {
  const folder = path.join(dir, "checks", `group${Math.floor(i / 50)}`);
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, `check_${i}.rego`), check(i));
  await writeFile(path.join(folder, `check_${i}_test.rego`), tests(i));
}
console.log(`${dir}: ${checks * 2 + 1} files, ${checks * 4} tests`);

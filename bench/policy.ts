/**
 * Measures the sample decision policy (policies/writ/decision.rego):
 * - compile time, cold (first build in the process) and warm (median of later builds);
 * - evaluations per second through @open-policy-agent/opa-wasm with an object input and with
 *   an ArrayBuffer input, against a baseline measured in the same run: the JSON round trip the
 *   SDK does for that input (stringify, encode, decode, parse), and an echo policy
 *   (`result := input`) through the same SDK.
 *
 * Run: npx tsx bench/policy.ts [seconds-per-measurement]
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadPolicy } from "@open-policy-agent/opa-wasm";
import { buildPolicy, type RegoSource } from "../src/rego/build.ts";
import { hostBuiltinsFor } from "../src/rego/host/index.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const seconds = Number(process.argv[2] ?? "2");

const sources: RegoSource[] = [
  {
    file: "policies/writ/decision.rego",
    source: readFileSync(path.join(root, "policies/writ/decision.rego"), "utf8"),
  },
];

const sumHash = "5d41402abc4b2a76b9719d911017c592";
const input = {
  subject: {
    id: "alice",
    tenant: "demo",
    roles: ["developer"],
    scopes: ["repo"],
    issuer: "https://id.example",
    claims: {},
  },
  action: {
    name: "repo.propose_edit",
    version: "1",
    side_effect: "reversible",
    idempotency: "natural",
    data_classification: "internal",
    args: {
      workspace: "ws-demo",
      path: "src/sum.ts",
      base_hash: sumHash,
      before: "return a - b",
      after: "return a + b",
    },
    args_digest: "8f4e2c5d4b2f0c3f3c6b4a8e2d1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f",
  },
  resource: {
    type: "workspace",
    id: "ws-demo",
    known: true,
    owner: "alice",
    tenant: "demo",
    revision: "3",
    attributes: {
      read_paths: ["README.md", "src/sum.ts"],
      edit_paths: ["src/sum.ts"],
      files: { "README.md": "9a0364b9e99bb480dd25e1f0284c8555", "src/sum.ts": sumHash },
      reads: { "src/sum.ts": [sumHash] },
      proposals: [],
    },
  },
  context: {
    time_ns: 1764496800000000000,
    request_id: "req-1",
    source: "openai",
    session: "s-1",
    phase: "call",
  },
};

function build(src: RegoSource[], entrypoints: string[]) {
  const built = buildPolicy(src, { entrypoints });
  if (!built.wasm) throw new Error(built.errors.map((e) => e.message).join("\n"));
  return built;
}

function rate(run: () => void): number {
  for (let i = 0; i < 2000; i++) run();
  let n = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  while (performance.now() < end) {
    for (let i = 0; i < 200; i++) run();
    n += 200;
  }
  return n / ((performance.now() - start) / 1000);
}

// Compile times.
let t = performance.now();
const built = build(sources, ["writ/decision"]);
const cold = performance.now() - t;
const warmRuns: number[] = [];
for (let i = 0; i < 15; i++) {
  t = performance.now();
  build(sources, ["writ/decision"]);
  warmRuns.push(performance.now() - t);
}
warmRuns.sort((a, b) => a - b);
const warm = warmRuns[Math.floor(warmRuns.length / 2)]!;

const decision = await loadPolicy(built.wasm!, undefined, hostBuiltinsFor(built.hostBuiltins));
decision.setData({});
const echoBuilt = build([{ file: "echo.rego", source: "package echo\nresult := input\n" }], ["echo/result"]);
const echo = await loadPolicy(echoBuilt.wasm!, undefined, hostBuiltinsFor(echoBuilt.hostBuiltins));
echo.setData({});

const answer = decision.evaluate(input, "writ/decision");
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const inputBuffer = encoder.encode(JSON.stringify(input)).buffer;
const resultBytes = encoder.encode(JSON.stringify(answer));

const jsonRoundTrip = rate(() => {
  encoder.encode(JSON.stringify(input));
  JSON.parse(decoder.decode(resultBytes));
});
const echoObject = rate(() => echo.evaluate(input, "echo/result"));
const decisionObject = rate(() => decision.evaluate(input, "writ/decision"));
const decisionBuffer = rate(() => decision.evaluate(inputBuffer, "writ/decision"));

const fmt = (n: number) => Math.round(n).toLocaleString("en-US").padStart(10);
console.log(`decision: ${JSON.stringify(answer)}`);
console.log(`module: ${built.wasm!.length} bytes; host builtins: ${built.hostBuiltins.join(", ") || "none"}`);
console.log(`compile: cold ${cold.toFixed(1)} ms, warm ${warm.toFixed(1)} ms (median of ${warmRuns.length})`);
console.log("");
console.log(`${"measurement".padEnd(46)}  evals/s    vs JSON round trip`);
const row = (label: string, n: number) =>
  console.log(`${label.padEnd(46)}${fmt(n)}    ${(n / jsonRoundTrip).toFixed(2)}x`);
row("baseline: SDK JSON round trip of this input", jsonRoundTrip);
row("baseline: echo policy through the SDK (object)", echoObject);
row("decision policy, object input", decisionObject);
row("decision policy, ArrayBuffer input", decisionBuffer);
console.log("");
console.log(`ArrayBuffer / object input: ${(decisionBuffer / decisionObject).toFixed(2)}x`);
console.log(`decision / echo policy (object): ${(decisionObject / echoObject).toFixed(2)}x`);

/**
 * Measures the sample decision policy (policies/writ/decision.rego):
 * - compile time, cold (first build in the process) and warm (median of later builds);
 * - evaluations per second through @open-policy-agent/opa-wasm with an object input and with
 *   an ArrayBuffer input, against a baseline measured in the same run: the JSON round trip the
 *   SDK does for that input (stringify, encode, decode, parse), and an echo policy
 *   (`result := input`) through the same SDK.
 *
 * - a regex-heavy policy (RE2 through re2js: match, find_n, replace, template_match, globs) and
 *   an io.jwt.decode_verify policy (RS256 against a JWKS), per evaluation, as ratios to the
 *   echo policy in the same run;
 * - a pathological pattern, `(a+)+$`, against inputs of growing length: RE2 stays linear where a
 *   backtracking engine takes exponential time;
 * - a decision through `PolicyEngine` (what the gateway's decide stage pays): the module metered
 *   on the calling thread (the gateway's path, issue 32), the same policy not metered on the
 *   calling thread (what the meter costs) and on an evaluator thread held to its budget (where
 *   the gateway runs a module the meter cannot stop, issue 27), in alternating rounds, with the
 *   cost per decision of each and their ratios.
 *
 * Run: npx tsx bench/policy.ts [seconds-per-measurement]
 */
import { generateKeyPairSync, sign } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadPolicy } from "@open-policy-agent/opa-wasm";
import { PolicyEngine } from "../src/policy/index.ts";
import { buildPolicy, type RegoSource } from "../src/rego/build.ts";
import { createBundle } from "../src/rego/bundle/index.ts";
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

// Builtin-heavy policies, as ratios to the echo policy.
const regexPolicy = build(
  [
    {
      file: "regex.rego",
      source: `package bench.regex

checks := {
  "email": regex.match(\`^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$\`, input.email),
  "path": regex.match(\`^/srv/(docs|public)/[\\w./-]+$\`, input.path),
  "ids": regex.find_n(\`[A-Z]{3}-[0-9]{4}\`, input.text, -1),
  "masked": regex.replace(input.text, \`[0-9]{4}\`, "****"),
  "template": regex.template_match("urn:foo:{.*}", input.urn, "{", "}"),
  "globs": regex.globs_match("a.a.", ".b.b"),
}`,
    },
  ],
  ["bench/regex/checks"],
);
const regexInput = {
  email: "alice.smith@example.com",
  path: "/srv/docs/guides/intro.md",
  text: "tickets ABC-1234 and XYZ-9876 were merged; card 4111 1111 1111 1111",
  urn: "urn:foo:bar:baz",
};
const regex = await loadPolicy(regexPolicy.wasm!, undefined, hostBuiltinsFor(regexPolicy.hostBuiltins));
regex.setData({});

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const jwk = { ...publicKey.export({ format: "jwk" }), kid: "k1", alg: "RS256", use: "sig" };
const b64 = (x: unknown) => Buffer.from(JSON.stringify(x)).toString("base64url");
const signingInput = `${b64({ alg: "RS256", typ: "JWT", kid: "k1" })}.${b64({
  iss: "https://id.example",
  aud: "writ",
  sub: "alice",
  exp: 4102444800,
})}`;
const token = `${signingInput}.${sign("sha256", Buffer.from(signingInput), privateKey).toString("base64url")}`;
const jwtPolicy = build(
  [
    {
      file: "jwt.rego",
      source: `package bench.jwt

claims := payload if {
  [valid, _, payload] := io.jwt.decode_verify(input.token, {"cert": data.jwks, "iss": "https://id.example", "aud": "writ"})
  valid
}`,
    },
  ],
  ["bench/jwt/claims"],
);
const jwt = await loadPolicy(jwtPolicy.wasm!, undefined, hostBuiltinsFor(jwtPolicy.hostBuiltins));
jwt.setData({ jwks: JSON.stringify({ keys: [jwk] }) });

const regexAnswer = regex.evaluate(regexInput, "bench/regex/checks");
const jwtAnswer = jwt.evaluate({ token }, "bench/jwt/claims");
const echoRegexInput = rate(() => echo.evaluate(regexInput, "echo/result"));
const regexRate = rate(() => regex.evaluate(regexInput, "bench/regex/checks"));
const echoToken = rate(() => echo.evaluate({ token }, "echo/result"));
const jwtRate = rate(() => jwt.evaluate({ token }, "bench/jwt/claims"));
console.log("");
console.log(`regex policy: ${JSON.stringify(regexAnswer)}`);
console.log(`jwt policy: ${JSON.stringify(jwtAnswer)}`);
console.log(`${"measurement".padEnd(46)}  evals/s    vs echo policy (same input)`);
const vsEcho = (label: string, n: number, base: number) =>
  console.log(`${label.padEnd(46)}${fmt(n)}    ${(n / base).toFixed(2)}x (${(1e6 / n).toFixed(1)} µs/eval)`);
vsEcho("echo policy, regex input", echoRegexInput, echoRegexInput);
vsEcho("regex-heavy policy (6 RE2 builtins)", regexRate, echoRegexInput);
vsEcho("echo policy, token input", echoToken, echoToken);
vsEcho("io.jwt.decode_verify (RS256, JWKS)", jwtRate, echoToken);

// A pathological pattern: time per evaluation grows with the input, not exponentially.
const redos = build(
  [{ file: "redos.rego", source: "package bench.redos\n\nhit := regex.match(`(a+)+$`, input.s)\n" }],
  ["bench/redos/hit"],
);
const redosPolicy = await loadPolicy(redos.wasm!, undefined, hostBuiltinsFor(redos.hostBuiltins));
redosPolicy.setData({});
console.log("");
console.log("(a+)+$ against 'a'×n + 'b' (a backtracking engine needs ~2^n steps):");
let previous: number | undefined;
for (const n of [1_000, 10_000, 100_000]) {
  const s = `${"a".repeat(n)}b`;
  const runs = n >= 100_000 ? 5 : 20;
  const start = performance.now();
  let answer: unknown;
  for (let i = 0; i < runs; i++) answer = redosPolicy.evaluate({ s }, "bench/redos/hit");
  const ms = (performance.now() - start) / runs;
  const growth = previous === undefined ? "" : `, ${(ms / previous).toFixed(1)}x the time for 10x the input`;
  console.log(`  n = ${String(n).padStart(7)}: ${ms.toFixed(2)} ms/eval ${JSON.stringify(answer)}${growth}`);
  previous = ms;
}

// The decision as the gateway's decide stage pays for it: metered inline, not metered inline and on a thread.
console.log("");
const policiesDir = path.join(root, "policies");
// A budget no evaluation meets on a loaded machine: this measures time, it does not judge it.
// The gateway's path: the folder compiled metered, evaluated on the calling thread, stopped at
// its budget by the module itself (isolate is on, as in the gateway, and not needed for it).
const metered = new PolicyEngine({ sourceRoot: root, isolate: true, timeBudgetMs: 60_000 });
await metered.loadDirectory(policiesDir);
// The same policy not metered (a bundle built with --no-budget): on the calling thread without a
// stop, and on an evaluator thread, where the gateway runs a module the meter cannot stop.
const unmeteredBuild = buildPolicy(sources, { entrypoints: ["writ/decision"], budget: false });
if (!unmeteredBuild.wasm) throw new Error("the sample policy does not compile");
const { bytes: unmeteredBundle } = await createBundle({
  wasm: unmeteredBuild.wasm,
  entrypoints: ["writ/decision"],
});
const inline = new PolicyEngine({ sourceRoot: root, timeBudgetMs: 60_000 });
await inline.loadBundleBytes(unmeteredBundle, "unmetered");
const threaded = new PolicyEngine({ sourceRoot: root, isolate: true, timeBudgetMs: 60_000 });
await threaded.loadBundleBytes(unmeteredBundle, "unmetered");
const perDecision = { metered: [] as number[], inline: [] as number[], threaded: [] as number[] };
const rounds = Math.max(4, Math.round(seconds * 2));
for (let round = 0; round < rounds; round++) {
  for (const [name, engine] of [
    ["metered", metered],
    ["inline", inline],
    ["threaded", threaded],
  ] as const) {
    const perSecond = rate(() => engine.evaluateStored(input));
    perDecision[name].push(1e6 / perSecond);
  }
}
metered.close();
threaded.close();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const meteredUs = median(perDecision.metered);
const inlineUs = median(perDecision.inline);
const threadedUs = median(perDecision.threaded);
console.log(`PolicyEngine.evaluate, the sample decision, median of ${rounds} alternating rounds:`);
console.log(`  metered, on the calling thread (the gateway) ${meteredUs.toFixed(1).padStart(7)} µs/decision`);
console.log(`  not metered, on the calling thread          ${inlineUs.toFixed(1).padStart(7)} µs/decision`);
console.log(`  not metered, on an evaluator thread         ${threadedUs.toFixed(1).padStart(7)} µs/decision`);
console.log(
  `  metered / not metered: ${(meteredUs / inlineUs).toFixed(2)}x; evaluator thread / metered: ${(threadedUs / meteredUs).toFixed(2)}x (+${(threadedUs - meteredUs).toFixed(1)} µs a decision)`,
);

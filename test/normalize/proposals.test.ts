/**
 * Path arguments end to end, through POST /v1/proposals on a real gateway: the grant's argument
 * digest, the logged policy input and what the backend is sent all carry the normalized path, and
 * a path that escapes its root is refused before the policy, logged like any refused call.
 *
 * Two gateways: the default one (the demo's repo.read declares its path relative to the
 * workspace), and one with the case, a docs.read contract rooted at /srv/docs and a policy
 * that checks `startswith(args.path, "/srv/docs/")`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { DEMO_FILES } from "../../src/demo/repository.ts";
import { canonicalCall, digestOf, logEntry, type Outcome, onlyOutcome, WS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";

/** The policy: a prefix check, sound only because Writ normalizes the path first. */
const DOCS_POLICY = `package writ

import rego.v1

default decision := {"decision": "deny", "reasons": [{"code": "outside_docs", "message": "only /srv/docs/ is readable", "visible_to_model": true}]}

decision := {"decision": "allow", "reasons": [], "grant": {"ttl_seconds": 60, "max_uses": 1}} if {
	input.action.name == "docs.read"
	startswith(input.action.args.path, "/srv/docs/")
}
`;

const DOCS_READ = {
  name: "docs.read",
  version: "1",
  description: "Read a document under /srv/docs",
  side_effect: "none",
  idempotency: "natural",
  input_schema: {
    type: "object",
    additionalProperties: false,
    required: ["path"],
    properties: { path: { type: "string", format: "path", "x-writ-root": "/srv/docs" } },
  },
  backend: { kind: "http", method: "GET", url: "http://127.0.0.1:9/docs" },
};

const loggedArgs = z.object({ action: z.object({ args: z.record(z.string(), z.unknown()) }) });
const loggedRefusal = z.object({ arguments: z.record(z.string(), z.unknown()) });

let demo: TestGateway;
let docs: TestGateway;

beforeAll(async () => {
  [demo, docs] = await Promise.all([
    startTestGateway(),
    startTestGateway({
      configure: (document, tmp) => {
        const dir = path.join(tmp, "docs-policy", "writ");
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, "decision.rego"), DOCS_POLICY);
        // No limits: the default's name the demo tools this configuration replaces.
        return {
          ...document,
          tools: [DOCS_READ],
          limits: [],
          history: [],
          policy: { dir: path.dirname(dir), watch: false },
        };
      },
    }),
  ]);
}, 30_000);

afterAll(async () => {
  await Promise.all([demo?.close(), docs?.close()]);
});

async function propose(
  gw: TestGateway,
  tool: string,
  args: Record<string, unknown>,
  execute = false,
): Promise<Outcome> {
  const alice = await gw.token("alice");
  return onlyOutcome(
    await gw.propose(alice, { format: "canonical", payload: canonicalCall(tool, args), execute }),
  );
}

/** The call was granted, its grant digesting and its log entry showing `normalized` arguments. */
async function expectGranted(gw: TestGateway, outcome: Outcome, normalized: Record<string, unknown>) {
  expect(outcome.decision, JSON.stringify(outcome)).toBe("allow");
  expect(decodeJwt(outcome.grant?.token ?? "").args).toBe(digestOf(normalized));
  expect(outcome.grant?.arguments).toEqual(normalized);
  const entry = await logEntry(gw, outcome.decision_id);
  expect(loggedArgs.parse(entry.input).action.args).toEqual(normalized);
}

/** The call's `raw` path was refused as `message`, before the policy, and logged as sent. */
async function expectRefused(gw: TestGateway, outcome: Outcome, raw: string, message: string, root: string) {
  expect(outcome.decision).toBe("error");
  expect(outcome.error).toMatchObject({
    category: "invalid_argument",
    field_errors: [{ path: "/arguments/path", message }],
  });
  expect(outcome.error?.suggested_fix).toContain(`send a path inside ${root} `);
  const entry = await logEntry(gw, outcome.decision_id);
  expect(entry).toMatchObject({ decision: "error", subject: "alice", grant_jti: null });
  expect(loggedRefusal.parse(entry.input).arguments.path).toBe(raw);
}

describe("the demo's repo.read path, relative to the workspace", () => {
  it("is normalized for the grant, the log and the handler", async () => {
    const outcome = await propose(demo, "repo.read", { workspace: WS, path: "./src//sum.ts/" }, true);
    await expectGranted(demo, outcome, { workspace: WS, path: "src/sum.ts" });
    expect(outcome.result?.structured_content.content).toBe(DEMO_FILES["src/sum.ts"]);
  });

  it("runs through POST /v1/execute sent as the caller wrote it: Writ normalizes it again", async () => {
    const raw = { workspace: WS, path: "/./README.md" };
    const outcome = await propose(demo, "repo.read", raw);
    await expectGranted(demo, outcome, { workspace: WS, path: "README.md" });
    const alice = await demo.token("alice");
    const answer = await demo.request("POST", "/v1/execute", {
      token: alice,
      body: { grant: outcome.grant?.token, tool: "repo.read", arguments: raw },
    });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).toContain(JSON.stringify(DEMO_FILES["README.md"]));
  });

  it("is what the policy checks: src/../.env arrives as .env and is denied", async () => {
    const outcome = await propose(demo, "repo.read", { workspace: WS, path: "src/%2e%2e/.env" });
    expect(outcome.decision).toBe("deny");
    expect(outcome.reasons.map((r) => r.code)).toEqual(["path_not_readable"]);
    const entry = await logEntry(demo, outcome.decision_id);
    expect(loggedArgs.parse(entry.input).action.args.path).toBe(".env");
  });

  it("is refused, before the policy and logged, when it climbs out of the workspace", async () => {
    const outcome = await propose(demo, "repo.read", { workspace: WS, path: "../.env" });
    await expectRefused(demo, outcome, "../.env", "climbs out of / with ..", "/");
  });
});

describe('the issue\'s case: startswith(args.path, "/srv/docs/")', () => {
  it("refuses /srv/docs/../secret as outside the root, before the policy", async () => {
    const raw = "/srv/docs/../secret";
    const outcome = await propose(docs, "docs.read", { path: raw });
    await expectRefused(docs, outcome, raw, "resolves to /srv/secret, outside /srv/docs", "/srv/docs");
  });

  it("grants a path inside the root in normal form", async () => {
    const outcome = await propose(docs, "docs.read", { path: "guides/./%C3%A9t%C3%A9//intro.md" });
    await expectGranted(docs, outcome, { path: "/srv/docs/guides/\u00e9t\u00e9/intro.md" });
  });
});

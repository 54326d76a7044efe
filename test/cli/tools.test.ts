/**
 * `writ tools --as` and the discovery warning of `writ policy check`/`test`, on the README
 * walkthrough's shape: one tool whose owner rule cannot hold in discovery (no arguments, the
 * resource unknown). Without a rule for the discover phase the policy hides every tool; with
 * one, bob sees notes.read. Real compiles, real tokens from the configuration's dev issuer.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.ts";
import { runCommand } from "../support/command.ts";
import { writInProcess as writ, writeFiles } from "../support/writ-cli.ts";

const config = `server: { host: 127.0.0.1, port: 0 }
store: { sqlite: .writ/writ.db }
policy: { dir: policy }
identity:
  dev_issuer: { enabled: true, key_file: .writ/dev-issuer.json, issuer: writ-dev, audience: writ }
grants: { issuer: writ, key_file: .writ/grant-keys.json }
seeds:
  resources:
    - { type: note, id: n1, owner: alice, tenant: demo }
tools:
  - name: notes.read
    version: "1"
    description: Read one note by its id.
    side_effect: none
    idempotency: natural
    resource: { type: note, id: /id }
    input_schema:
      type: object
      additionalProperties: false
      required: [id]
      properties:
        id: { type: string }
    backend: { kind: http, method: GET, url: "http://127.0.0.1:3001/notes/{id}" }
`;

const ownerRule = `package writ

import rego.v1

default decision := {"decision": "deny", "reasons": [{"code": "not_owner", "message": "only the owner", "visible_to_model": true}]}

decision := {"decision": "allow", "reasons": []} if {
	input.action.name == "notes.read"
	input.resource.known
	input.resource.owner == input.subject.id
}
`;

const discoverRule = `
decision := {"decision": "allow", "reasons": []} if {
	input.context.phase == "discover"
	input.subject.tenant == "demo"
}
`;

const test = `package writ_test

import rego.v1

test_owner if data.writ.decision.decision == "allow" with input as {"action": {"name": "notes.read"}, "resource": {"known": true, "owner": "a"}, "subject": {"id": "a"}}
`;

let hiding: string;
let showing: string;

beforeAll(async () => {
  hiding = await mkdtemp(path.join(tmpdir(), "writ-tools-hiding-"));
  showing = await mkdtemp(path.join(tmpdir(), "writ-tools-showing-"));
  const files = (policy: string) => ({
    "writ.yaml": config,
    "policy/notes.rego": policy,
    "policy/notes_test.rego": test,
  });
  await writeFiles(hiding, files(ownerRule));
  await writeFiles(showing, files(ownerRule + discoverRule));
});

afterAll(async () => {
  for (const dir of [hiding, showing]) await rm(dir, { recursive: true, force: true });
});

const tools = (dir: string, ...args: string[]) =>
  runCommand(main, ["tools", "--config", path.join(dir, "writ.yaml"), ...args]);

describe("writ tools --as", () => {
  it("shows what a caller given as claims would see, and why", async () => {
    const seen = await tools(showing, "--as", '{"sub": "bob", "tnt": "demo"}');
    expect(seen.code).toBe(0);
    expect(seen.printed).toMatch(
      /^bob \(tenant demo, roles none, issuer writ-dev\) sees 1 of 1 tools\n\s+shown\s+notes\.read@1\s+allow/,
    );
    const other = await tools(showing, "--as", '{"sub": "eve", "tnt": "acme"}');
    expect(other.printed).toMatch(
      /sees 0 of 1 tools\n\s+hidden\s+notes\.read@1\s+deny \(not_owner: only the owner\)/,
    );
  }, 60_000);

  it("says every tool is hidden and shows the discovery input when the policy hides them all", async () => {
    const seen = await tools(hiding, "--as", '{"sub": "alice", "tnt": "demo"}', "--format", "json");
    expect(seen.code).toBe(0);
    const answer = JSON.parse(seen.printed);
    expect(answer.tools).toHaveLength(1);
    expect(answer.tools[0]).toMatchObject({
      tool: "notes.read",
      shown: false,
      decision: { decision: "deny", reasons: [{ code: "not_owner" }] },
      input: {
        action: { name: "notes.read", args: {} },
        resource: { type: "note", id: "", known: false },
        context: { phase: "discover" },
        subject: { id: "alice", tenant: "demo" },
      },
    });
    const text = await tools(hiding, "--as", '{"sub": "alice", "tnt": "demo"}');
    expect(text.printed).toContain("Every tool is hidden.");
    expect(text.printed).toContain('"phase": "discover"');
  }, 60_000);

  it("verifies a token as the gateway does, and refuses one it would refuse", async () => {
    const minted = await runCommand(main, [
      "token",
      "--sub",
      "bob",
      "--tenant",
      "demo",
      "--config",
      path.join(showing, "writ.yaml"),
    ]);
    expect(minted.code).toBe(0);
    const seen = await tools(showing, "--as", minted.printed.trim());
    expect(seen.printed).toMatch(/^bob \(tenant demo.*sees 1 of 1 tools/);
    // The same token is not the hiding folder's: its dev issuer has another key.
    const foreign = await tools(hiding, "--as", minted.printed.trim());
    expect(foreign.code).toBe(1);
    expect(foreign.printed).toMatch(/^writ tools: no key in the configured/);
    const usage = await runCommand(main, ["tools"]);
    expect(usage.code).toBe(2);
    expect(usage.printed).toContain("--as is required");
  }, 60_000);
});

describe("writ policy check and test warn when discovery would hide every tool", () => {
  it("warns for the policy writ.yaml serves, from the folder holding it, and not once a rule shows the tool", async () => {
    const tested = await writ(["policy", "test", "policy"], hiding);
    expect(tested.code).toBe(0);
    expect(tested.stdout).toContain("PASS: 1/1");
    expect(tested.stderr).toMatch(
      /^writ policy test: warning: the policy hides every tool: with writ\.yaml, tool discovery .* shows none of its 1 tools to alice \(tenant demo\)/,
    );
    expect(tested.stderr).toContain('"context":{"phase":"discover"}');
    const checked = await writ(["policy", "check", "policy"], hiding);
    expect(checked.code).toBe(0);
    expect(checked.stderr).toMatch(/^writ policy check: warning: the policy hides every tool/);

    const fine = await writ(["policy", "check", "policy"], showing);
    expect(fine.code).toBe(0);
    expect(fine.stderr).toBe("");
  }, 120_000);

  it("takes --config, and says nothing for a folder the configuration does not serve", async () => {
    const checked = await runCommand(main, [
      "policy",
      "check",
      path.join(hiding, "policy"),
      "--config",
      path.join(hiding, "writ.yaml"),
    ]);
    expect(checked.code).toBe(0);
    expect(checked.printed).toContain("warning: the policy hides every tool");
    const elsewhere = await runCommand(main, [
      "policy",
      "check",
      path.join(showing, "policy"),
      "--config",
      path.join(hiding, "writ.yaml"),
    ]);
    expect(elsewhere.code).toBe(0);
    expect(elsewhere.printed).not.toContain("warning");
  }, 60_000);
});

/**
 * An unknown tool's `suggested_fix` names close tools among those the caller may see, never one
 * discovery hides from them (issue 27): on `/v1/proposals` (every format), on `/mcp`, and on
 * `/v1/execute`. The gateway here has one more tool, `vault.export`, which the sample policy
 * governs no action of, so discovery hides it from everyone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { HIDDEN_TOOL } from "../support/hidden-tool.ts";
import { postMcp } from "../support/mcp-client.ts";
import { canonicalCall, chatToolCall, errorOf, onlyOutcome } from "./api.ts";

let gw: TestGateway;
let alice: string;

beforeAll(async () => {
  gw = await startTestGateway({
    configure: (document) => ({
      ...document,
      tools: [...z.array(z.unknown()).parse(document.tools), HIDDEN_TOOL],
    }),
  });
  alice = await gw.token("alice");
}, 60_000);

afterAll(async () => {
  await gw?.close();
});

describe("an unknown tool's suggestions", () => {
  it("are tools the caller may see, never a hidden one, on /v1/proposals", async () => {
    const listed = await gw.request("GET", "/v1/tools", { token: alice });
    expect(listed.text).not.toContain("vault");
    const attempts = [
      { format: "canonical", payload: canonicalCall("vault.exprt", {}) },
      { format: "canonical", payload: canonicalCall("vault-export", {}) },
      { format: "openai-chat", payload: chatToolCall("c1", "vault_exprt", {}) },
    ];
    for (const body of attempts) {
      const outcome = onlyOutcome(await gw.propose(alice, body));
      expect(outcome.error?.category, JSON.stringify(body)).toBe("unknown_tool");
      expect(outcome.error?.suggested_fix).not.toMatch(/vault/);
      expect(outcome.error?.suggested_fix).toMatch(/closest first: .*repo/);
    }
  });

  it("are tools the caller may see on /mcp and /v1/execute too", async () => {
    const answer = await postMcp(gw.url, alice, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "vault_exprt", arguments: {} },
    });
    const text = await answer.text();
    expect(text).toContain("unknown_tool");
    expect(text).not.toMatch(/vault_export|vault\.export/);
    expect(text).toMatch(/closest first: .*repo_/);

    const executed = await gw.request("POST", "/v1/execute", {
      token: alice,
      body: { grant: "not-a-grant", tool: "vault.exprt", arguments: {} },
    });
    const error = errorOf(executed, 404);
    expect(error.category).toBe("unknown_tool");
    expect(error.suggested_fix).not.toMatch(/vault/);
  });
});

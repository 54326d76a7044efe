/**
 * Step-up authorization on /mcp (src/mcp/step-up.ts): a token lacking a scope the policy requires
 * for a call (the sample policy: commit_payment needs payments:write and payments:commit) gets
 * HTTP 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="<every scope>",
 * resource_metadata="…"` on both revisions, and a JSON-RPC error carrying Writ's error; a real v2
 * client without an OAuth provider surfaces it as the SDK's InsufficientScopeError. A token with
 * the scopes passes the check (the call then waits for a treasurer). Scopes of a tool the caller
 * cannot see are never told.
 */
import { InsufficientScopeError } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";
import { HIDDEN_TOOL } from "../support/hidden-tool.ts";
import { connectModernMcp, postModern } from "../support/mcp-v2-client.ts";

const SCOPES = "payments:write payments:commit";
const call = { name: "commit_payment", arguments: { draft: "drf_1" } };

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    configure: (document) => ({
      ...document,
      tools: [...z.array(z.unknown()).parse(document.tools), HIDDEN_TOOL],
    }),
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
});

const partialToken = () => gw.token("alice", { claims: { scope: "payments:write" } });

const challengeOf = (description: string, scopes = SCOPES) =>
  `Bearer realm="writ", resource_metadata="${gw.url}/.well-known/oauth-protected-resource/mcp", scope="${scopes}", error="insufficient_scope", error_description="${description}"`;

const refusalSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.literal(7),
  error: z.object({
    code: z.number(),
    data: z.object({
      error: z.object({ category: z.string(), required_scopes: z.array(z.string()) }),
      decision: z.string(),
      decision_id: z.string(),
    }),
  }),
});

describe("insufficient_scope on /mcp", () => {
  it("a real v2 client whose token lacks a scope is refused with the challenge naming every scope", async () => {
    const client = await connectModernMcp(gw.url, await partialToken());
    try {
      const refused = await client.callTool(call).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(InsufficientScopeError);
      expect(refused).toMatchObject({
        requiredScope: SCOPES,
        resourceMetadataUrl: new URL(`${gw.url}/.well-known/oauth-protected-resource/mcp`),
      });
    } finally {
      await client.close();
    }
  });

  it("raw 2026-07-28 and 2025-11-25 POSTs get the 403, its exact header and Writ's error", async () => {
    const token = await partialToken();
    const modern = await postModern(gw.url, token, { id: 7, method: "tools/call", params: call });
    const legacy = await gw.request("POST", "/mcp", {
      token,
      body: { jsonrpc: "2.0", id: 7, method: "tools/call", params: call },
      headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
    });
    const description = "commit_payment needs a token with the scopes payments:write payments:commit";
    for (const answer of [
      { status: modern.status, headers: modern.headers, json: await modern.json() },
      legacy,
    ]) {
      expect(answer.status).toBe(403);
      expect(answer.headers.get("www-authenticate")).toBe(challengeOf(description));
      const { error } = refusalSchema.parse(answer.json);
      expect(error.code).toBe(-32000);
      expect(error.data).toMatchObject({
        decision: "deny",
        error: { category: "policy_denied", required_scopes: ["payments:write", "payments:commit"] },
      });
    }
  });

  it("a token with the scopes passes the check: the call waits for a treasurer instead", async () => {
    const token = await gw.token("alice", { claims: { scope: SCOPES } });
    const client = await connectModernMcp(gw.url, token);
    try {
      const result = await client.callTool(call);
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: { category: "approval_required" } });
    } finally {
      await client.close();
    }
  });

  it("never names the scopes of a tool the caller cannot see", async () => {
    // Every call is denied for want of a scope; discovery hides vault.export only.
    const before = (await gw.health()).policy_revision;
    await gw.writePolicy(`package writ
decision := {"decision": "deny", "reasons": [{"code": "hidden", "message": "hidden"}]} if {
	input.context.phase == "discover"
	input.action.name == "vault.export"
} else := {"decision": "allow", "grant": {"ttl_seconds": 60}} if {
	input.context.phase == "discover"
} else := {"decision": "deny", "reasons": [{"code": "insufficient_scope", "message": "a scope is missing"}], "required_scopes": ["vault:admin"]}
`);
    await waitFor("the reload", async () =>
      (await gw.health()).policy_revision !== before ? true : undefined,
    );
    const token = await partialToken();
    const hidden = await postModern(gw.url, token, {
      id: 7,
      method: "tools/call",
      params: { name: "vault_export" },
    });
    expect(hidden.status).toBe(200);
    expect(hidden.headers.get("www-authenticate")).toBeNull();
    const text = await hidden.text();
    expect(text).not.toContain("vault:admin");
    expect(text).not.toContain("required_scopes");
    const shown = await postModern(gw.url, token, {
      id: 7,
      method: "tools/call",
      params: { name: "repo_search", arguments: { workspace: "ws-demo", query: "x" } },
    });
    expect(shown.status).toBe(403);
    expect(shown.headers.get("www-authenticate")).toBe(challengeOf("a scope is missing", "vault:admin"));
  });
});

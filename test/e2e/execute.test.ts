/**
 * Executing through the gateway (DESIGN sections 1.8–1.9, 2, 5, 7): POST /v1/execute with a grant
 * from a proposal or an approval, single use, argument binding, conditions, idempotency, and
 * secret masking in results.
 */
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestGateway, type TestGateway, waitFor } from "../support/gateway.ts";
import {
  canonicalCall,
  digestOf,
  errorOf,
  layeredResultSchema,
  onlyOutcome,
  README_ARGS,
  WS,
} from "./api.ts";

const executeAnswerSchema = z.strictObject({ tool: z.string(), result: layeredResultSchema });

let gw: TestGateway;
let alice: string;
let carol: string;

beforeAll(async () => {
  gw = await startTestGateway();
  alice = await gw.token("alice");
  carol = await gw.token("carol", { roles: ["maintainer"] });
});
afterAll(async () => {
  await gw?.close();
});

function execute(token: string, body: unknown, headers: Record<string, string> = {}) {
  return gw.request("POST", "/v1/execute", { token, body, headers });
}

async function grantFor(tool: string, args: Record<string, unknown>, session?: string): Promise<string> {
  const outcome = onlyOutcome(
    await gw.propose(alice, {
      format: "canonical",
      payload: canonicalCall(tool, args),
      ...(session ? { session } : {}),
    }),
  );
  if (!outcome.grant) throw new Error(`no grant: ${JSON.stringify(outcome)}`);
  return outcome.grant.token;
}

describe("POST /v1/execute", () => {
  it("runs a call with the grant of a proposal, once", async () => {
    const grant = await grantFor("repo_read", README_ARGS);
    const answer = await execute(alice, { grant, tool: "repo_read", arguments: README_ARGS });
    expect(answer.status, answer.text).toBe(200);
    const { result } = executeAnswerSchema.parse(answer.json);
    expect(result.structured_content.content).toContain("sum(a, b)");
    expect(result.provenance).toMatchObject({ tool: "repo.read", target: "README.md" });
    expect(result.execution_meta.effect).toBe("none");

    const again = errorOf(await execute(alice, { grant, tool: "repo_read", arguments: README_ARGS }), 403);
    expect(again).toMatchObject({ category: "policy_denied", effect_committed: false });
    expect(again.message).toMatch(/already used/);
  });

  it("accepts the canonical call form and refuses tampered arguments without using the grant", async () => {
    const grant = await grantFor("repo_read", README_ARGS);
    const tampered = errorOf(
      await execute(alice, {
        grant,
        call: canonicalCall("repo_read", { workspace: WS, path: "src/sum.ts" }),
      }),
      403,
    );
    expect(tampered).toMatchObject({ category: "policy_denied", effect_committed: false });
    const ok = await execute(alice, { grant, call: canonicalCall("repo_read", README_ARGS) });
    expect(ok.status, ok.text).toBe(200);
  });

  it("refuses a grant presented by someone else", async () => {
    const grant = await grantFor("repo_read", README_ARGS);
    const bob = await gw.token("bob");
    const refused = errorOf(await execute(bob, { grant, tool: "repo_read", arguments: README_ARGS }), 403);
    expect(refused.category).toBe("policy_denied");
  });

  it("executes an approved repo_apply_edit: the file changes; the old base hash is then stale", async () => {
    const readGrant = await grantFor("repo_read", { workspace: WS, path: "src/sum.ts" });
    const read = executeAnswerSchema.parse(
      (
        await execute(alice, {
          grant: readGrant,
          tool: "repo_read",
          arguments: { workspace: WS, path: "src/sum.ts" },
        })
      ).json,
    );
    const hash = z.string().parse(read.result.structured_content.hash);
    const args = { workspace: WS, path: "src/sum.ts", base_hash: hash, before: "a - b", after: "a + b" };
    const proposed = onlyOutcome(
      await gw.propose(alice, { format: "canonical", payload: canonicalCall("repo_apply_edit", args) }),
    );
    expect(proposed.decision).toBe("require_approval");
    const id = proposed.approval?.id ?? "";
    const approved = await gw.request("POST", `/v1/approvals/${id}/approve`, { token: carol, body: {} });
    expect(approved.status, approved.text).toBe(200);
    const view = await gw.request("GET", `/v1/approvals/${id}`, { token: alice });
    const grant = z.object({ grant: z.object({ token: z.string() }) }).parse(view.json).grant.token;

    const applied = await execute(alice, { grant, tool: "repo_apply_edit", arguments: args });
    expect(applied.status, applied.text).toBe(200);
    expect(executeAnswerSchema.parse(applied.json).result.execution_meta.effect).toBe("committing");
    expect(await gw.repository.read("src/sum.ts")).toContain("a + b");

    const reread = await grantFor("repo_read", { workspace: WS, path: "src/sum.ts" });
    const after = executeAnswerSchema.parse(
      (
        await execute(alice, {
          grant: reread,
          tool: "repo_read",
          arguments: { workspace: WS, path: "src/sum.ts" },
        })
      ).json,
    );
    expect(after.result.structured_content.content).toContain("a + b");

    // A second edit from the old base hash: approved again, refused at dispatch as stale.
    const second = { ...args, before: "a + b", after: "a * b" };
    const p2 = onlyOutcome(
      await gw.propose(alice, { format: "canonical", payload: canonicalCall("repo_apply_edit", second) }),
    );
    if (p2.decision === "require_approval") {
      const id2 = p2.approval?.id ?? "";
      const ok = await gw.request("POST", `/v1/approvals/${id2}/approve`, { token: carol, body: {} });
      if (ok.status === 200) {
        const g2 = z.object({ grant: z.object({ token: z.string() }) }).parse(ok.json).grant.token;
        const stale = errorOf(
          await execute(alice, { grant: g2, tool: "repo_apply_edit", arguments: second }),
          409,
        );
        expect(stale).toMatchObject({ category: "stale_revision", effect_committed: false });
      } else {
        expect(z.object({ category: z.string() }).parse(ok.json).category).toMatch(
          /stale_revision|policy_denied/,
        );
      }
    } else {
      expect(p2.decision).toBe("deny");
    }
    expect(await gw.repository.read("src/sum.ts")).toContain("a + b");
  });

  it("masks a secret in a result", async () => {
    const original = (await gw.repository.read("README.md")) ?? "";
    const secret = `ghp_${"a1B2".repeat(9)}`;
    await gw.repository.write("README.md", `${original}token: ${secret}\n`);
    try {
      const grant = await grantFor("repo_read", README_ARGS);
      const answer = executeAnswerSchema.parse(
        (await execute(alice, { grant, tool: "repo_read", arguments: README_ARGS })).json,
      );
      expect(JSON.stringify(answer)).not.toContain(secret);
      expect(answer.result.structured_content.content).toContain("[masked]");
    } finally {
      await gw.repository.write("README.md", original);
    }
  });

  it("with an Idempotency-Key, replays the stored outcome and refuses a different request", async () => {
    const grant = await grantFor("repo_read", README_ARGS);
    const headers = { "idempotency-key": "key-1" };
    const body = { grant, tool: "repo_read", arguments: README_ARGS };
    const first = await execute(alice, body, headers);
    expect(first.status, first.text).toBe(200);
    const again = await execute(alice, body, headers);
    expect(again.status, again.text).toBe(200);
    // The grant is single use: the same answer came from the store, not a second execution.
    expect(again.json).toEqual(first.json);
    const other = errorOf(
      await execute(alice, { ...body, arguments: { workspace: WS, path: "src/sum.ts" } }, headers),
      409,
    );
    expect(other.category).toBe("conflict");
  });
});

const CONDITIONS_POLICY = `package writ

import rego.v1

default decision := {"decision": "deny", "reasons": [{"code": "no", "message": "no rule", "visible_to_model": true}]}

allow(conditions) := {"decision": "allow_with_conditions", "reasons": [], "conditions": conditions}

decision := allow([{"type": "args_override", "args": {"query": "sum"}}]) if input.context.session == "override"

decision := allow([{"type": "max_value", "path": "/query", "max": 10}]) if input.context.session == "max"

decision := allow([{"type": "require_revision", "revision": input.resource.revision}]) if input.context.session == "rev-ok"

decision := allow([{"type": "require_revision", "revision": "999"}]) if input.context.session == "rev-stale"

decision := allow([{"type": "redact_result", "paths": ["/content"]}]) if input.context.session == "redact"

decision := allow([{"type": "teleport"}]) if input.context.session == "unknown"

decision := allow([{"type": "max_uses", "uses": 2}]) if input.context.session == "twice"
`;

describe("conditions (a policy answering allow_with_conditions)", () => {
  beforeAll(async () => {
    const before = (await gw.health()).policy_revision;
    await gw.writePolicy(CONDITIONS_POLICY);
    await waitFor("the policy reload", async () => {
      const h = await gw.health();
      return h.status === "ok" && h.policy_revision !== before ? h : undefined;
    });
  });

  const propose = (tool: string, args: Record<string, unknown>, session: string) =>
    gw.propose(alice, { format: "canonical", payload: canonicalCall(tool, args), session, execute: true });

  it("args_override: the forced value is dispatched and the grant's digest is of the final arguments", async () => {
    const args = { workspace: WS, query: "zzz" };
    const outcome = onlyOutcome(await propose("repo_search", args, "override"));
    expect(outcome.decision).toBe("allow_with_conditions");
    expect(outcome.result?.structured_content.query).toBe("sum");
    expect(decodeJwt(outcome.grant?.token ?? "").args).toBe(digestOf({ ...args, query: "sum" }));
    // The answer names the arguments the grant is bound to, for a caller that dispatches itself.
    expect(outcome.grant?.arguments).toEqual({ ...args, query: "sum" });
    expect(digestOf(outcome.grant?.arguments)).toBe(decodeJwt(outcome.grant?.token ?? "").args);
  });

  it("max_value: a value that is not within the maximum is refused", async () => {
    const outcome = onlyOutcome(await propose("repo_search", { workspace: WS, query: "sum" }, "max"));
    expect(outcome.error).toMatchObject({ category: "policy_denied", effect_committed: false });
    expect(outcome.result).toBeUndefined();
  });

  it("require_revision: the current revision executes, another one is stale_revision", async () => {
    const ok = onlyOutcome(await propose("repo_search", { workspace: WS, query: "sum" }, "rev-ok"));
    expect(ok.result).toBeDefined();
    const stale = onlyOutcome(await propose("repo_search", { workspace: WS, query: "sum" }, "rev-stale"));
    expect(stale.error).toMatchObject({ category: "stale_revision", effect_committed: false });
  });

  it("redact_result: the path is removed and recorded", async () => {
    const outcome = onlyOutcome(await propose("repo_read", README_ARGS, "redact"));
    expect(outcome.result?.structured_content).not.toHaveProperty("content");
    expect(outcome.result?.structured_content.path).toBe("README.md");
    expect(outcome.result?.redacted).toEqual(["/content"]);
  });

  it("max_uses: the grant runs as many times as the condition allows, then is refused", async () => {
    const args = { workspace: WS, query: "sum" };
    const outcome = onlyOutcome(
      await gw.propose(alice, {
        format: "canonical",
        payload: canonicalCall("repo_search", args),
        session: "twice",
      }),
    );
    const grant = outcome.grant?.token ?? "";
    expect(decodeJwt(grant).max).toBe(2);
    const run = () => execute(alice, { grant, tool: "repo_search", arguments: args });
    expect((await run()).status).toBe(200);
    expect((await run()).status).toBe(200);
    const third = await run();
    expect(third.status).toBe(403);
  });

  it("an unknown condition is a denial", async () => {
    const outcome = onlyOutcome(await propose("repo_search", { workspace: WS, query: "sum" }, "unknown"));
    expect(outcome.decision).toBe("deny");
    expect(outcome.grant).toBeUndefined();
    expect(outcome.result).toBeUndefined();
  });
});

/**
 * Tool discovery end to end: GET /v1/tools lists the tools the caller may use, as its model family
 * sees them, in a stable order; answers are cached per authorization context.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import type { PolicyInput } from "../../src/core/types.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { errorOf } from "./api.ts";

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});

afterAll(async () => {
  await gw?.close();
});

const TOOL_NAMES = [
  "commit_payment",
  "create_payment_draft",
  "repo_apply_edit",
  "repo_finish",
  "repo_propose_edit",
  "repo_read",
  "repo_search",
];

const toolsSchema = z.strictObject({
  tools: z.array(
    z.strictObject({
      name: z.string(),
      description: z.string().min(1),
      input_schema: z.looseObject({
        type: z.literal("object"),
        properties: z.record(z.string(), z.unknown()),
      }),
      contract: z.strictObject({
        name: z.string(),
        version: z.string(),
        side_effect: z.string(),
        idempotency: z.string(),
      }),
    }),
  ),
});

async function tools(token: string, family = "openai") {
  const answer = await gw.request("GET", `/v1/tools?family=${family}`, { token });
  expect(answer.status, answer.text).toBe(200);
  return toolsSchema.parse(answer.json).tools;
}

/** The phases of the policy evaluations `evaluate` saw. */
function phases(spy: { mock: { calls: Array<[PolicyInput]> } }): string[] {
  return spy.mock.calls.map(([input]) => input.context.phase);
}

describe("GET /v1/tools", () => {
  it("lists the demo tools for alice in a stable order, and serves the second call from the cache", async () => {
    const alice = await gw.token("alice");
    const evaluate = vi.spyOn(gw.gateway.policy, "evaluate");
    try {
      const first = await tools(alice);
      // The registry's order: by canonical name, then version.
      expect(first.map((t) => t.name)).toEqual(TOOL_NAMES);
      expect(first.map(({ contract: { idempotency: _, ...rest } }) => rest)).toEqual([
        { name: "commit_payment", version: "1", side_effect: "committing" },
        { name: "create_payment_draft", version: "1", side_effect: "reversible" },
        { name: "repo.apply_edit", version: "1", side_effect: "committing" },
        { name: "repo.finish", version: "1", side_effect: "none" },
        { name: "repo.propose_edit", version: "1", side_effect: "reversible" },
        { name: "repo.read", version: "1", side_effect: "none" },
        { name: "repo.search", version: "1", side_effect: "none" },
      ]);
      expect(first.find((t) => t.name === "repo_read")?.input_schema.properties).toHaveProperty("path");
      // One discovery evaluation per contract.
      expect(phases(evaluate)).toEqual(TOOL_NAMES.map(() => "discover"));

      evaluate.mockClear();
      const second = await tools(alice);
      expect(second).toEqual(first);
      expect(evaluate).not.toHaveBeenCalled();

      // A fresh token of the same subject, roles and tenant shares the cached answer.
      const again = await tools(await gw.token("alice"));
      expect(again).toEqual(first);
      expect(evaluate).not.toHaveBeenCalled();
    } finally {
      evaluate.mockRestore();
    }
  });

  it("is never shared across subjects, tenants, roles or families", async () => {
    const evaluate = vi.spyOn(gw.gateway.policy, "evaluate");
    try {
      const contexts = [
        await gw.token("bob"),
        await gw.token("alice", { tenant: "other" }),
        await gw.token("alice", { roles: ["developer", "maintainer"] }),
      ];
      for (const token of contexts) {
        evaluate.mockClear();
        await tools(token);
        expect(evaluate).toHaveBeenCalledTimes(TOOL_NAMES.length);
      }
      evaluate.mockClear();
      const anthropic = await tools(await gw.token("alice"), "anthropic");
      expect(evaluate).toHaveBeenCalledTimes(TOOL_NAMES.length);
      expect(anthropic.map((t) => t.name)).toEqual(TOOL_NAMES);
    } finally {
      evaluate.mockRestore();
    }
  });

  it("an unknown family is invalid_argument", async () => {
    const answer = await gw.request("GET", "/v1/tools?family=gemini", { token: await gw.token("alice") });
    expect(errorOf(answer, 400).field_errors.map((f) => f.path)).toContain("/family");
  });
});

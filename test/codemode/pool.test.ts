/**
 * Code Mode under one developer's spinning programs (issue 27), over HTTP: a caller runs at most
 * `code_mode.max_concurrent_runs` programs at once (one more is refused rate_limited, with
 * Retry-After, and its code.run entry says so), and each program has a sandbox thread of its own,
 * so another tenant's `return 42` is answered while they still spin.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { codeModeConfigSchema } from "../../src/codemode/config.ts";
import { sandboxPool } from "../../src/codemode/index.ts";
import { logEntries } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({
    configure: (document) => ({
      ...document,
      code_mode: {
        enabled: true,
        cpu_ms: 6000,
        duration_ms: 30_000,
        max_concurrent_runs: 2,
        sandbox_threads: 3,
      },
    }),
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
});

const answerSchema = z
  .object({
    outcome: z.string(),
    value: z.unknown().optional(),
    error: z.object({ category: z.string(), retry_after: z.number().optional() }).passthrough().optional(),
  })
  .passthrough();

function run(token: string, code: string) {
  return gw.request("POST", "/v1/run_code", { token, body: { code } });
}

describe("one developer's spinning programs", () => {
  it("run two at a time, the rest refused; another tenant's run returns while they spin", async () => {
    const dave = await gw.token("dave", { tenant: "acme", roles: ["developer"] });
    const olga = await gw.token("olga", { tenant: "other", roles: ["developer"] });
    const settled: boolean[] = [];
    const spinning = Array.from({ length: 12 }, (_, i) => {
      settled[i] = false;
      return run(dave, "for (;;) {}").then((answer) => {
        settled[i] = true;
        return answer;
      });
    });
    const count = () => settled.filter(Boolean).length;
    for (let i = 0; i < 300 && count() < 10; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(count()).toBe(10);

    const answer = await run(olga, "return 42;");
    expect(answer.status, answer.text).toBe(200);
    expect(answerSchema.parse(answer.json)).toMatchObject({ outcome: "returned", value: 42 });
    // Answered while dave's two programs still spin on threads of their own.
    expect(count()).toBe(10);

    const answers = await Promise.all(spinning);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(10);
    for (const a of refused) {
      expect(a.headers.get("retry-after")).toBe("1");
      expect(answerSchema.parse(a.json)).toMatchObject({
        outcome: "refused",
        error: { category: "rate_limited", retry_after: 1 },
      });
    }
    const ran = answers.filter((a) => a.status !== 429).map((a) => answerSchema.parse(a.json).outcome);
    expect(ran).toEqual(["stopped", "stopped"]);
    const entries = (await logEntries(gw, { action: "code.run", subject: "dave" })).filter((e) =>
      e.reasons.some((r) => r.code === "rate_limited"),
    );
    expect(entries).toHaveLength(10);
  });
});

describe("the pool's size", () => {
  it("always leaves a thread beyond one caller's cap", async () => {
    const pool = sandboxPool(codeModeConfigSchema.parse({ max_concurrent_runs: 12 }));
    expect(pool.size).toBe(13);
    await pool.close();
    const refused = codeModeConfigSchema.safeParse({ max_concurrent_runs: 3, sandbox_threads: 3 });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]).toMatchObject({
      path: ["sandbox_threads"],
      message: expect.stringMatching(/must be more than max_concurrent_runs \(3\)/),
    });
  });
});

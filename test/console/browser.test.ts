/**
 * The console in real headless Chromium (Debian's, driven by playwright-core) against a real
 * gateway: a reviewer filters decisions and opens one; an approver approves a pending request and
 * the requester then gets the grant; a user without a reviewer or approver role is refused; an
 * entry edited in the SQLite file shows as broken in the console and in `writ logs verify`.
 * One browser for the file; each scenario gets its own context (its own cookies).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { runLogs, tamperWithEntry, writeStoreConfig } from "../cli/logs-helpers.ts";
import { canonicalCall, grantViewSchema, type Outcome, onlyOutcome, README_ARGS, WS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { repoRoot } from "../support/paths.ts";
import { hasChromium, launchChromium, pendingApproval, signIn, withPage as withPageOf } from "./helpers.ts";

let gw: TestGateway;
let browser: Browser;
let tmp: string;
const outcomes: Outcome[] = [];

async function decide(subject: string, args: Record<string, unknown>): Promise<Outcome> {
  const token = await gw.token(subject);
  const outcome = onlyOutcome(
    await gw.propose(token, { format: "canonical", payload: canonicalCall("repo.read", args) }),
  );
  outcomes.push(outcome);
  return outcome;
}

function withPage<T>(work: (page: Page) => Promise<T>): Promise<T> {
  return withPageOf(browser, work);
}

describe.skipIf(!hasChromium)("the console in Chromium", () => {
  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "writ-console-"));
    [gw, browser] = await Promise.all([startTestGateway(), launchChromium()]);
    await decide("alice", README_ARGS);
    await decide("alice", { workspace: WS, path: ".env" });
    await decide("bob", README_ARGS);
    await decide("alice", README_ARGS);
    expect(outcomes.map((o) => o.decision)).toEqual(["allow", "deny", "deny", "allow"]);
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it("a reviewer filters the decisions and opens one that explains its outcome", async () => {
    await withPage(async (page) => {
      await signIn(page, gw, await gw.token("rita", { roles: ["reviewer"] }));
      expect(new URL(page.url()).pathname).toBe("/console/decisions");
      await expect(page.locator("[data-chain]").first().getAttribute("data-chain")).resolves.toBe("intact");
      // The calls, and (newest) rita's own sign-in.
      expect(await page.locator("tbody tr").count()).toBe(outcomes.length + 1);
      expect(await page.locator("tbody tr").first().textContent()).toContain("console_sign_in");
      expect(await page.locator("svg[aria-label='Decisions per outcome over time']").count()).toBe(1);

      await page.fill("input[name=subject]", "alice");
      await page.selectOption("select[name=decision]", "deny");
      await Promise.all([page.waitForURL(/decision=deny/), page.click("form.filters button[type=submit]")]);
      const rows = page.locator("tbody tr");
      expect(await rows.count()).toBe(1);
      const denied = outcomes[1];
      expect(await rows.first().getAttribute("data-decision-id")).toBe(denied?.decision_id);

      await Promise.all([
        page.waitForURL(/\/console\/decisions\/[0-9a-f-]+$/),
        rows.first().locator("a").click(),
      ]);
      const text = await page.locator("main").textContent();
      expect(text).toContain(denied?.decision_id);
      expect(text).toContain("path_not_readable");
      expect(text).toMatch(/denied the call/);
      expect(text).toMatch(/workspace\/ws-demo\s+revision \d+/);
      expect(await page.locator("[data-policy-revision]").textContent()).toMatch(/\S+/);
      expect(await page.locator("[data-chain]").getAttribute("data-chain")).toBe("verified");
    });
  });

  it("a reviewer reads why .env was denied, answer first: the rule, the line and the values", async () => {
    const source = await readFile(path.join(repoRoot, "policies/writ/decision.rego"), "utf8");
    const line =
      source.split("\n").findIndex((l) => l.trim() === "not args.path in workspace.read_paths") + 1;
    expect(line).toBeGreaterThan(0);
    await withPage(async (page) => {
      await signIn(page, gw, await gw.token("rita", { roles: ["reviewer"] }));
      await page.goto(`${gw.url}/console/decisions/${outcomes[1]?.decision_id}`);
      await Promise.all([page.waitForURL(/\/explain$/), page.click("a[data-explain]")]);
      const summary = await page.locator("[data-summary]").textContent();
      expect(summary).toMatch(
        new RegExp(
          `^deny ← denials contains reason\\("path_not_readable".*writ/decision\\.rego:\\d+\\) ← line ${line} not args\\.path in workspace\\.read_paths$`,
        ),
      );
      // The deciding expression once, visible without unfolding anything, with its values.
      const step = page.locator(`[data-answer] [data-step-line="${line}"]`);
      expect(await step.count()).toBe(1);
      expect(await step.isVisible()).toBe(true);
      expect(await step.locator('[data-value="args.path"]').textContent()).toBe('args.path = ".env"');
      expect(await step.locator('[data-value="workspace.read_paths"]').textContent()).toBe(
        'workspace.read_paths = ["README.md","src/sum.ts"]',
      );
      // The rest is folded.
      expect(await page.locator("[data-rest] details").getAttribute("open")).toBeNull();
      expect(await page.locator("[data-rest] [data-rule]").first().isVisible()).toBe(false);
    });
  });

  it("an approver approves a pending request in the queue, and the requester then gets the grant", async () => {
    const id = await pendingApproval(gw);
    await withPage(async (page) => {
      await signIn(page, gw, await gw.token("carol", { roles: ["maintainer"] }));
      expect(new URL(page.url()).pathname).toBe("/console/approvals");
      const card = page.locator(`[data-approval-id="${id}"]`);
      expect(await card.textContent()).toContain("alice asks to run repo.apply_edit");
      await card.locator("input[name=reason]").first().fill("reviewed the diff");
      await Promise.all([
        page.waitForURL(/decided=/),
        card.locator("button", { hasText: "Approve" }).click(),
      ]);
      expect(await page.locator("[data-decided]").textContent()).toContain(`Approval ${id} approved`);
      expect(await page.locator(`[data-approval-id="${id}"]`).count()).toBe(0);
    });
    const alice = await gw.token("alice");
    const answer = await gw.request("GET", `/v1/approvals/${id}`, { token: alice });
    const approval = z
      .object({
        status: z.literal("approved"),
        decided_by: z.literal("carol"),
        reason: z.string(),
        grant: grantViewSchema,
      })
      .parse(answer.json);
    expect(approval.reason).toBe("reviewed the diff");
    expect(approval.grant.token.split(".")).toHaveLength(3);
  });

  it("a user without a reviewer or approver role is refused", async () => {
    await withPage(async (page) => {
      const response = page.waitForResponse(
        (r) => r.url().endsWith("/console/sign-in") && r.request().method() === "POST",
      );
      await signIn(page, gw, await gw.token("alice", { roles: ["developer"] }));
      expect((await response).status()).toBe(403);
      const text = await page.locator("main").textContent();
      expect(text).toContain("alice may not use the console");
      expect(text).toContain("What to do next");
      const direct = await page.goto(`${gw.url}/console/decisions`);
      expect(direct?.status()).toBe(401);
    });
  });

  it("an entry edited in the store shows as broken in the console and in writ logs verify", async () => {
    const target = outcomes[1];
    const entry = await gw.gateway.log.get(target?.decision_id ?? "");
    if (entry === undefined) throw new Error("the denied decision is not in the log");
    tamperWithEntry(gw, entry.seq);

    await withPage(async (page) => {
      await signIn(page, gw, await gw.token("rita", { roles: ["reviewer"] }));
      const banner = page.locator("[data-chain]").first();
      expect(await banner.getAttribute("data-chain")).toBe("broken");
      expect(await banner.textContent()).toContain(
        `BROKEN at entry ${entry.seq} (decision ${entry.decision_id})`,
      );
      const row = page.locator(`tr[data-decision-id="${entry.decision_id}"]`);
      expect(await row.getAttribute("class")).toBe("broken");
      expect(await row.textContent()).toContain("broken");

      await page.goto(`${gw.url}/console/decisions/${entry.decision_id}`);
      expect(await page.locator("[data-chain]").getAttribute("data-chain")).toBe("broken");
      await page.goto(`${gw.url}/console/decisions/${outcomes[3]?.decision_id}`);
      expect(await page.locator("[data-chain]").getAttribute("data-chain")).toBe("after_break");
    });

    const verify = await runLogs(["verify", "--config", await writeStoreConfig(gw, tmp)]);
    expect(verify.code).toBe(1);
    expect(verify.stdout.join("\n")).toContain(
      `broken at seq ${entry.seq} (decision ${entry.decision_id}): hash_mismatch`,
    );
  });
});

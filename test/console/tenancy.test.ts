/**
 * The console keeps tenants apart (issue 15), in real headless Chromium against a real gateway:
 * a reviewer and an approver of tenant `evil` see none of tenant `demo`'s decisions or approvals
 * and cannot decide them; a reviewer with the configured platform role names `demo` in the filter,
 * follows an entry to its page, and each reach is on the decision log.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalCall, logEntries, onlyOutcome, README_ARGS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { withPlatformRole } from "../support/tenancy.ts";
import { hasChromium, launchChromium, pendingApproval, signIn, withPage as withPageOf } from "./helpers.ts";

let gw: TestGateway;
let browser: Browser;
let demoDecision: string;

function withPage<T>(work: (page: Page) => Promise<T>): Promise<T> {
  return withPageOf(browser, work);
}

describe.skipIf(!hasChromium)("the console keeps tenants apart", () => {
  beforeAll(async () => {
    [gw, browser] = await Promise.all([
      startTestGateway({
        configure: withPlatformRole,
      }),
      launchChromium(),
    ]);
    const alice = await gw.token("alice");
    demoDecision = onlyOutcome(
      await gw.propose(alice, { format: "canonical", payload: canonicalCall("repo.read", README_ARGS) }),
    ).decision_id;
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  it("a reviewer of another tenant sees no demo decision, by list, address or filter", async () => {
    await withPage(async (page) => {
      await signIn(page, gw, await gw.token("mallory", { tenant: "evil", roles: ["reviewer"] }));
      expect(new URL(page.url()).pathname).toBe("/console/decisions");
      // Only mallory's own sign-in, on her tenant's log.
      expect(await page.locator("tbody tr").allTextContents()).toEqual([
        expect.stringContaining("console_sign_in"),
      ]);
      expect(await page.content()).not.toContain(demoDecision);

      const direct = await page.goto(`${gw.url}/console/decisions/${demoDecision}`);
      expect(direct?.status()).toBe(404);
      expect(await page.locator("main").textContent()).not.toContain("alice");

      await page.goto(`${gw.url}/console/decisions`);
      await page.fill("input[name=tenant]", "demo");
      const [filtered] = await Promise.all([
        page.waitForResponse((r) => r.url().includes("tenant=demo")),
        page.click("form.filters button[type=submit]"),
      ]);
      expect(filtered.status()).toBe(403);
      expect(await page.locator("main").textContent()).toMatch(/platform role/);
    });
    const refused = (await logEntries(gw, { subject: "mallory" })).filter((e) => e.path === "writ/tenancy");
    expect(refused).toMatchObject([{ tenant: "demo", decision: "deny", action: "console /decisions" }]);
  });

  it("an approver of another tenant neither sees nor decides demo's request", async () => {
    const id = await pendingApproval(gw);
    await withPage(async (page) => {
      await signIn(page, gw, await gw.token("mallory", { tenant: "evil", roles: ["maintainer"] }));
      expect(new URL(page.url()).pathname).toBe("/console/approvals");
      expect(await page.locator(`[data-approval-id="${id}"]`).count()).toBe(0);
      // A hand-made form with the session's own anti-forgery token, from the console's origin.
      const csrf = await page.locator("input[name=csrf]").first().getAttribute("value");
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith(`/approvals/${id}/approve`)),
        // (A script string: the test's TypeScript has no DOM types.)
        page.evaluate(`(() => {
          const form = document.createElement("form");
          form.method = "POST";
          form.action = ${JSON.stringify(`/console/approvals/${id}/approve`)};
          const field = document.createElement("input");
          field.name = "csrf";
          field.value = ${JSON.stringify(csrf ?? "")};
          form.append(field);
          document.body.append(form);
          form.submit();
        })()`),
      ]);
      expect(answer.status()).toBe(403);
      await page.waitForLoadState("load");
      expect(await page.locator("main").textContent()).toContain(`you may not decide approval ${id}`);
    });
    const maintainer = await gw.token("carol", { roles: ["maintainer"] });
    const still = await gw.request("GET", `/v1/approvals/${id}`, { token: maintainer });
    expect(still.json).toMatchObject({ id, status: "pending" });
  });

  it("a platform reviewer names demo in the filter, opens an entry, and each reach is logged", async () => {
    await withPage(async (page) => {
      await signIn(page, gw, await gw.token("pat", { tenant: "ops", roles: ["reviewer", "platform-admin"] }));
      expect(await page.locator("tbody tr").allTextContents()).toEqual([
        expect.stringContaining("console_sign_in"),
      ]);
      await page.fill("input[name=tenant]", "demo");
      await Promise.all([page.waitForURL(/tenant=demo/), page.click("form.filters button[type=submit]")]);
      const row = page.locator(`tbody tr[data-decision-id="${demoDecision}"]`);
      expect(await row.count()).toBe(1);
      await Promise.all([
        page.waitForURL(/\/console\/decisions\/[0-9a-f-]+\?tenant=demo$/),
        row.locator("a").click(),
      ]);
      expect(await page.locator("main").textContent()).toContain(demoDecision);
    });
    const reaches = (await logEntries(gw, { subject: "pat" })).filter((e) => e.path === "writ/tenancy");
    expect(reaches.map((e) => [e.action, e.tenant, e.decision])).toEqual([
      ["console /decisions/:id", "demo", "allow"],
      ["console /decisions", "demo", "allow"],
    ]);
  });
});

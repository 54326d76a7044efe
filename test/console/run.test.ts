/**
 * A Code Mode run in the console, in real headless Chromium: a reviewer finds a run's entries with
 * the run filter, the run's decision page lists the calls its program made with links, and a
 * call's page links back to its run.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { hasChromium, launchChromium, signIn, withPage } from "./helpers.ts";

let gw: TestGateway;
let browser: Browser;
let run: { id: string; decision_id: string };
let ledger: { tool: string; decision_id: string | null }[];

describe.skipIf(!hasChromium)("a Code Mode run in the console", () => {
  beforeAll(async () => {
    [gw, browser] = await Promise.all([startTestGateway(), launchChromium()]);
    const answer = await gw.request("POST", "/v1/run_code", {
      token: await gw.token("alice"),
      body: {
        code: `await tools.repo_read({ workspace: "ws-demo", path: "README.md" });
               await tools.repo_read({ workspace: "ws-demo", path: ".env" });`,
      },
    });
    const body = z
      .object({
        run: z.object({ id: z.string(), decision_id: z.string() }),
        ledger: z.array(z.object({ tool: z.string(), decision_id: z.string().nullable() })),
      })
      .parse(answer.json);
    run = body.run;
    ledger = body.ledger;
    expect(ledger).toHaveLength(2);
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  it("lists a run's calls on its decision page, each linked, and links a call back to its run", async () => {
    await withPage(browser, async (page) => {
      await signIn(page, gw, await gw.token("rita", { roles: ["reviewer"] }));
      await page.fill("input[name=run]", run.id);
      await Promise.all([page.waitForURL(/run=/), page.click("form.filters button[type=submit]")]);
      // The run's own entry and its two calls; not rita's sign-in.
      expect(await page.locator("tbody tr").count()).toBe(3);

      await page.goto(`${gw.url}/console/decisions/${run.decision_id}`);
      const section = page.locator(`section[data-run="${run.id}"]`);
      expect(await section.textContent()).toContain("This decision let a program run");
      const rows = section.locator("table[data-run-calls] tbody tr");
      expect(await rows.count()).toBe(2);
      expect(await rows.nth(1).textContent()).toContain("path_not_readable");

      await Promise.all([
        page.waitForURL(new RegExp(`${ledger[1]?.decision_id}$`)),
        rows.nth(1).locator("a").click(),
      ]);
      const inner = page.locator(`section[data-run="${run.id}"]`);
      expect(await inner.textContent()).toContain("This call was made by a program in run");
      expect(await inner.locator("tr[data-current=true]").count()).toBe(1);
      await Promise.all([
        page.waitForURL(new RegExp(`${run.decision_id}$`)),
        inner.getByText("the run's decision").click(),
      ]);
    });
  });
});

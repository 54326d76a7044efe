/**
 * `npm run screenshots`: starts a gateway on a temporary store (the end-to-end harness: loopback
 * gateway and identity provider), produces some decisions and a pending approval, uploads a
 * candidate policy on the Policy changes page, and writes
 * docs/screenshots/{decisions,decision,explain,policy-changes,approvals}.png from Debian's headless Chromium.
 */
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { hasChromium, launchChromium, pendingApproval, signIn } from "../test/console/helpers.ts";
import { canonicalCall, onlyOutcome, README_ARGS, WS } from "../test/e2e/api.ts";
import { startTestGateway } from "../test/support/gateway.ts";
import { repoRoot } from "../test/support/paths.ts";

const outDir = path.join(repoRoot, "docs", "screenshots");

async function main(): Promise<number> {
  if (!hasChromium) {
    console.error("npm run screenshots: /usr/bin/chromium is missing\n  next: apt-get install chromium");
    return 1;
  }
  await mkdir(outDir, { recursive: true });
  const gw = await startTestGateway();
  const browser = await launchChromium();
  try {
    const calls: Array<[string, string, Record<string, unknown>]> = [
      ["alice", "repo.read", README_ARGS],
      ["alice", "repo.search", { workspace: WS, query: "sum" }],
      ["alice", "repo.read", { workspace: WS, path: ".env" }],
      ["bob", "repo.read", README_ARGS],
      ["alice", "repo.read", { workspace: WS, path: "src/sum.ts" }],
      ["bob", "repo.search", { workspace: WS, query: "token" }],
      ["alice", "repo.delete", { workspace: WS }],
      ["alice", "repo.read", { workspace: WS, path: ".env" }],
    ];
    let deniedId: string | undefined;
    for (const [subject, tool, args] of calls) {
      const outcome = onlyOutcome(
        await gw.propose(await gw.token(subject), {
          format: "canonical",
          payload: canonicalCall(tool, args),
        }),
      );
      if (outcome.decision === "deny" && deniedId === undefined) deniedId = outcome.decision_id;
    }
    await pendingApproval(gw);

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signIn(page, gw, await gw.token("carol", { roles: ["reviewer", "maintainer"] }));
    await page.goto(`${gw.url}/console/decisions`);
    await page.screenshot({ path: path.join(outDir, "decisions.png"), fullPage: true });
    await page.goto(`${gw.url}/console/decisions/${deniedId}`);
    await page.screenshot({ path: path.join(outDir, "decision.png"), fullPage: true });
    await page.goto(`${gw.url}/console/decisions/${deniedId}/explain`);
    await page.screenshot({ path: path.join(outDir, "explain.png"), fullPage: true });
    // A candidate that also refuses reads of src/sum.ts, uploaded as a reviewer would.
    const original = await readFile(path.join(repoRoot, "policies", "writ", "decision.rego"), "utf8");
    const candidate = `${original}
denials contains reason("sum_closed", "sum.ts is not to be read") if {
\tinput.action.name == "repo.read"
\tendswith(args.path, "sum.ts")
}
`;
    await page.goto(`${gw.url}/console/policy?days=1`);
    await page.setInputFiles("input[name=files]", {
      name: "decision.rego",
      mimeType: "text/plain",
      buffer: Buffer.from(candidate),
    });
    await Promise.all([page.waitForURL(/upload=/), page.click("form.upload button[type=submit]")]);
    await page.screenshot({ path: path.join(outDir, "policy-changes.png"), fullPage: true });
    await page.goto(`${gw.url}/console/approvals`);
    await page.screenshot({ path: path.join(outDir, "approvals.png"), fullPage: true });
    await context.close();
    console.log(
      `wrote decisions.png, decision.png, explain.png, policy-changes.png and approvals.png to ${outDir}`,
    );
    return 0;
  } finally {
    await browser.close();
    await gw.close();
  }
}

process.exitCode = await main();

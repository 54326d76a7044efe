/**
 * The console's policy pages (issue 19), over HTTP with a reviewer's session: "Policy changes", the
 * archived revisions with the live one marked, and a candidate revision replayed against the
 * tenant's decisions, listing exactly the decisions it would change; and a decision explained.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalCall, onlyOutcome, README_ARGS, WS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { README_CLOSED_RULE, reloadWith } from "../support/policies.ts";
import { sessionCookie } from "./helpers.ts";

let gw: TestGateway;
let first: string;
let tightened: string;
let readmeDecision: string;
let sourceDecision: string;

beforeAll(async () => {
  gw = await startTestGateway();
  first = (await gw.health()).policy_revision ?? "";
  const alice = await gw.token("alice");
  const read = async (path: string) =>
    onlyOutcome(
      await gw.propose(alice, {
        format: "canonical",
        payload: canonicalCall("repo_read", { workspace: WS, path }),
      }),
    );
  readmeDecision = (await read(README_ARGS.path)).decision_id;
  sourceDecision = (await read("src/sum.ts")).decision_id;
  tightened = await reloadWith(gw, README_CLOSED_RULE);
}, 60_000);

afterAll(async () => {
  await gw?.close();
});

async function page(token: string, query = ""): Promise<{ status: number; html: string }> {
  const { cookie } = await sessionCookie(gw, token);
  const answer = await fetch(`${gw.url}/console/policy${query}`, { headers: { cookie } });
  return { status: answer.status, html: await answer.text() };
}

describe("the Policy changes page", () => {
  it("lists the revisions and replays a candidate: exactly the decisions it changes", async () => {
    const reviewer = await gw.token("rita", { roles: ["reviewer"] });
    const list = await page(reviewer);
    expect(list.status).toBe(200);
    expect(list.html).toContain(`data-revision="${first}"`);
    expect(list.html).toContain(`<code>${tightened}</code> (live)`);

    const replayed = await page(reviewer, `?candidate=${tightened}&days=1`);
    expect(replayed.status).toBe(200);
    expect(replayed.html).toContain("<strong>1 would change</strong>");
    expect(replayed.html).toContain(`data-decision-id="${readmeDecision}"`);
    expect(replayed.html).not.toContain(`data-decision-id="${sourceDecision}"`);
    expect(replayed.html).toContain("readme_closed");
    expect(replayed.html).toMatch(/allow → deny: 1/);
  });

  it("replays only the viewer's tenant, and says when a revision is not archived", async () => {
    const outsider = await gw.token("omar", { tenant: "other", roles: ["reviewer"] });
    const replayed = await page(outsider, `?candidate=${tightened}&days=1`);
    expect(replayed.status).toBe(200);
    expect(replayed.html).toContain("0 decisions replayed");
    expect(replayed.html).not.toContain(readmeDecision);
    const reviewer = await gw.token("rita", { roles: ["reviewer"] });
    const unknown = await page(reviewer, "?candidate=nope");
    expect(unknown.status).toBe(404);
    expect(unknown.html).toContain("is not in the archive");
  });
});

describe("a decision's explanation in the console", () => {
  it("links from the decision's page and names the rule and line of its reason", async () => {
    const reviewer = await gw.token("rita", { roles: ["reviewer"] });
    const mallory = await gw.token("mallory");
    const denied = onlyOutcome(
      await gw.propose(mallory, { format: "canonical", payload: canonicalCall("repo_read", README_ARGS) }),
    );
    await gw.gateway.log.drain();
    const { cookie } = await sessionCookie(gw, reviewer);
    const decision = await (
      await fetch(`${gw.url}/console/decisions/${denied.decision_id}`, { headers: { cookie } })
    ).text();
    const href = /<a href="([^"]+)" data-explain[^>]*>/.exec(decision)?.[1];
    expect(href).toBe(`/console/decisions/${denied.decision_id}/explain`);
    const answer = await fetch(`${gw.url}${href}`, { headers: { cookie } });
    expect(answer.status).toBe(200);
    const html = await answer.text();
    expect(html).toContain("the same result as logged");
    // The not_owner reason's rule, with the line of its owner check.
    expect(html).toMatch(/data-rule="data\.writ\.denials" data-line="\d+"/);
    expect(html).toContain("hidden_reason(&quot;not_owner&quot;");
    expect(html).toContain("input.resource.owner != input.subject.id");
  });
});

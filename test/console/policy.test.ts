/**
 * The console's policy pages (issue 19), over HTTP with a reviewer's session: "Policy changes", the
 * archived revisions with the live one marked, and a candidate revision replayed against the
 * tenant's decisions, listing exactly the decisions it would change; and a decision explained.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalCall, onlyOutcome, README_ARGS, WS } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { repoRoot } from "../support/paths.ts";
import { README_CLOSED_RULE, reloadWith } from "../support/policies.ts";
import { csrfTokenIn, sessionCookie } from "./helpers.ts";

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

/** POSTs files to the candidate upload as a browser does (multipart, same origin, csrf field). */
async function upload(
  token: string,
  files: Array<{ name: string; text: string | Uint8Array }>,
  options: { csrf?: boolean } = {},
): Promise<Response> {
  const { cookie } = await sessionCookie(gw, token);
  const pageHtml = await (await fetch(`${gw.url}/console/policy`, { headers: { cookie } })).text();
  const form = new FormData();
  if (options.csrf !== false) form.set("csrf", csrfTokenIn(pageHtml));
  for (const f of files) form.append("files", new Blob([f.text]), f.name);
  return fetch(`${gw.url}/console/policy/candidates?days=1`, {
    method: "POST",
    body: form,
    headers: { cookie, origin: gw.url },
    redirect: "manual",
  });
}

/** A rule that refuses reads of src/sum.ts, for a candidate that differs from the live policy. */
const SUM_CLOSED_RULE = `
denials contains reason("sum_closed", "sum.ts is not to be read") if {
\tinput.action.name == "repo.read"
\tendswith(args.path, "sum.ts")
}
`;

describe("a candidate policy uploaded on the Policy changes page", () => {
  it("is replayed against the tenant's decisions and its sources are compared with the live ones", async () => {
    const reviewer = await gw.token("rita", { roles: ["reviewer"] });
    const original = await readFile(path.join(repoRoot, "policies/writ/decision.rego"), "utf8");
    // The file chosen without its folder: it stands for the live writ/decision.rego.
    const answer = await upload(reviewer, [{ name: "decision.rego", text: `${original}${SUM_CLOSED_RULE}` }]);
    expect(answer.status, await answer.clone().text()).toBe(303);
    const location = answer.headers.get("location") ?? "";
    expect(location).toMatch(/^\/console\/policy\?upload=[0-9a-f]+&days=1$/);

    const replayed = await page(reviewer, location.slice("/console/policy".length));
    expect(replayed.status).toBe(200);
    expect(replayed.html).toContain("Uploaded candidate");
    expect(replayed.html).toContain("<strong>1 would change</strong>");
    expect(replayed.html).toContain(`data-decision-id="${sourceDecision}"`);
    expect(replayed.html).toContain("sum_closed");
    // Against the live revision (which closed README files): that rule removed, this one added.
    expect(replayed.html).toContain(`data-diff-file="writ/decision.rego"`);
    expect(replayed.html).toMatch(
      /<tr class="added"[^>]*>.*?\+ denials contains reason\(&quot;sum_closed&quot;/s,
    );
    expect(replayed.html).toMatch(
      /<tr class="removed"[^>]*>.*?- denials contains reason\(&quot;readme_closed&quot;/s,
    );

    // Another tenant's reviewer cannot reach it.
    const outsider = await gw.token("omar", { tenant: "other", roles: ["reviewer"] });
    const hidden = await page(outsider, location.slice("/console/policy".length));
    expect(hidden.status).toBe(404);
    expect(hidden.html).not.toContain("sum_closed");
  });

  it("shows the compiler's positioned errors for a candidate that does not compile", async () => {
    const reviewer = await gw.token("rita", { roles: ["reviewer"] });
    const answer = await upload(reviewer, [
      { name: "decision.rego", text: "package writ\n\ndecision := {\n" },
    ]);
    expect(answer.status).toBe(400);
    const html = await answer.text();
    expect(html).toContain("The candidate does not compile");
    expect(html).toMatch(/writ\/decision\.rego:\d+:\d+: rego_parse_error/);
  });

  it("is refused without the form's anti-forgery token, and to a viewer who does not review", async () => {
    const reviewer = await gw.token("rita", { roles: ["reviewer"] });
    const forged = await upload(reviewer, [{ name: "decision.rego", text: "package writ\n" }], {
      csrf: false,
    });
    expect(forged.status).toBe(403);
    const approver = await gw.token("mia", { roles: ["maintainer"] });
    const refused = await upload(approver, [{ name: "decision.rego", text: "package writ\n" }]);
    expect(refused.status).toBe(403);
  });

  it("shows the diff between two archived revisions", async () => {
    const reviewer = await gw.token("rita", { roles: ["reviewer"] });
    const compared = await page(reviewer, `?candidate=${tightened}&base=${first}&days=1`);
    expect(compared.status).toBe(200);
    expect(compared.html).toMatch(
      /<tr class="added"[^>]*>.*?\+ denials contains reason\(&quot;readme_closed&quot;/s,
    );
    expect(compared.html).not.toContain('class="removed"');
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

// Last: the server answers 413 before it reads the body, and closes the connection under it.
describe("an upload above the size limit", () => {
  it("is refused with 413", async () => {
    const reviewer = await gw.token("rita", { roles: ["reviewer"] });
    const huge = await upload(reviewer, [{ name: "decision.rego", text: new Uint8Array(3 * 1024 * 1024) }]);
    expect(huge.status).toBe(413);
  });
});

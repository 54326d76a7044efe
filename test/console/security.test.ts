/**
 * The console's access rules and forgery protection over plain HTTP: the session cookie's
 * attributes, refusals as pages with 401/403 that say what to do next, and POSTs refused without
 * the same origin or without the session's synchronizer token; and cursor paging of the list.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { csrfTokenIn, pendingApproval, postForm, sessionCookie } from "./helpers.ts";

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});

afterAll(async () => {
  await gw?.close();
});

async function page(route: string, cookie?: string) {
  const answer = await fetch(`${gw.url}${route}`, {
    redirect: "manual",
    headers: cookie === undefined ? {} : { cookie },
  });
  return { status: answer.status, text: await answer.text(), headers: answer.headers };
}

describe("sessions", () => {
  it("sets an HttpOnly, SameSite=Strict cookie for /console holding an opaque session id, not the token", async () => {
    const token = await gw.token("rita", { roles: ["reviewer"] });
    const { setCookie } = await sessionCookie(gw, token);
    expect(setCookie).toMatch(/^writ_console=[A-Za-z0-9_-]{43};/);
    expect(setCookie).not.toContain(token);
    expect(setCookie).toContain("HttpOnly");
    expect(setCookie).toContain("SameSite=Strict");
    expect(setCookie).toContain("Path=/console");
    expect(setCookie).toMatch(/Expires=/);
    expect(setCookie).not.toContain("Secure"); // plain http on loopback
  });

  it("without a session a page is 401 with the sign-in form", async () => {
    const answer = await page("/console/decisions");
    expect(answer.status).toBe(401);
    expect(answer.text).toContain("not signed in");
    expect(answer.text).toContain('action="/console/sign-in"');
    expect(answer.headers.get("content-security-policy")).toContain("default-src 'none'");
  });

  it("a forged cookie, or one holding a token (as before server-side sessions), is 401", async () => {
    expect((await page("/console/decisions", "writ_console=not.a.jwt")).status).toBe(401);
    // An id of the right shape that no sign-in handed out.
    expect((await page("/console/decisions", `writ_console=${"A".repeat(43)}`)).status).toBe(401);
    const expired = await gw.token("rita", {
      roles: ["reviewer"],
      claims: { exp: Math.floor(Date.now() / 1000) - 3600 },
    });
    expect((await page("/console/decisions", `writ_console=${expired}`)).status).toBe(401);
  });

  it("each part needs its role: 403 pages that name the roles", async () => {
    const reviewer = await sessionCookie(gw, await gw.token("rita", { roles: ["reviewer"] }));
    const approvals = await page("/console/approvals", reviewer.cookie);
    expect(approvals.status).toBe(403);
    expect(approvals.text).toContain("the approvals queue needs one of the roles maintainer, treasurer");
    const approver = await sessionCookie(gw, await gw.token("carol", { roles: ["maintainer"] }));
    const decisions = await page("/console/decisions", approver.cookie);
    expect(decisions.status).toBe(403);
    expect(decisions.text).toContain("reading the decision log needs one of the roles reviewer");
    expect(decisions.text).toContain("What to do next");
  });

  it("a bad filter is a 400 page naming the field", async () => {
    const reviewer = await sessionCookie(gw, await gw.token("rita", { roles: ["reviewer"] }));
    const bad = await page("/console/decisions?decision=maybe", reviewer.cookie);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("/decision");
  });
});

describe("cross-site request forgery", () => {
  it("refuses a sign-in POST from another origin", async () => {
    const token = await gw.token("rita", { roles: ["reviewer"] });
    const forged = await postForm(gw, "/console/sign-in", { token }, { origin: "https://evil.example" });
    expect(forged.status).toBe(403);
    expect(forged.headers.get("set-cookie")).toBeNull();
    const noOrigin = await postForm(gw, "/console/sign-in", { token });
    expect(noOrigin.status).toBe(403);
  });

  it("refuses approve/reject without the session's token, with a wrong one, or from another origin", async () => {
    const id = await pendingApproval(gw);
    const { cookie } = await sessionCookie(gw, await gw.token("carol", { roles: ["maintainer"] }));
    const queue = await page("/console/approvals", cookie);
    expect(queue.status).toBe(200);
    expect(queue.text).toContain(id);
    const csrf = csrfTokenIn(queue.text);
    const route = `/console/approvals/${id}/approve`;
    const sameOrigin = { cookie, origin: gw.url };

    const missing = await postForm(gw, route, {}, sameOrigin);
    expect(missing.status).toBe(403);
    expect(await missing.text()).toContain("anti-forgery token is missing or does not match");
    const wrong = await postForm(gw, route, { csrf: `${csrf.slice(0, -2)}xx` }, sameOrigin);
    expect(wrong.status).toBe(403);
    const otherSession = await sessionCookie(gw, await gw.token("dora", { roles: ["maintainer"] }));
    const stolen = await postForm(
      gw,
      route,
      { csrf: csrfTokenIn((await page("/console/approvals", otherSession.cookie)).text) },
      sameOrigin,
    );
    expect(stolen.status).toBe(403);
    const crossSite = await postForm(
      gw,
      `/console/approvals/${id}/reject`,
      { csrf, reason: "x" },
      { cookie, origin: "https://evil.example" },
    );
    expect(crossSite.status).toBe(403);
    expect(await crossSite.text()).toContain("not sent from the console&#39;s own pages");

    const alice = await gw.token("alice");
    const still = await gw.request("GET", `/v1/approvals/${id}`, { token: alice });
    expect(still.json).toMatchObject({ status: "pending" });

    // With the right token the same form goes through.
    const rejected = await postForm(
      gw,
      `/console/approvals/${id}/reject`,
      { csrf, reason: "not now" },
      sameOrigin,
    );
    expect(rejected.status).toBe(303);
    expect((await gw.request("GET", `/v1/approvals/${id}`, { token: alice })).json).toMatchObject({
      status: "rejected",
      reason: "not now",
    });
  });

  it("rejecting without a reason is refused", async () => {
    const id = await pendingApproval(gw);
    const { cookie } = await sessionCookie(gw, await gw.token("carol", { roles: ["maintainer"] }));
    const csrf = csrfTokenIn((await page("/console/approvals", cookie)).text);
    const answer = await postForm(
      gw,
      `/console/approvals/${id}/reject`,
      { csrf, reason: "  " },
      { cookie, origin: gw.url },
    );
    expect(answer.status).toBe(400);
    expect(await answer.text()).toContain("say why you reject the request");
  });
});

describe("paging", () => {
  it("pages older decisions with the cursor, keeping the filters and the page size", async () => {
    const alice = await gw.token("alice");
    for (let i = 0; i < 3; i++) {
      await gw.propose(alice, {
        format: "canonical",
        payload: { tool: "repo.read", arguments: { workspace: "ws-demo", path: "README.md" } },
      });
    }
    const { cookie } = await sessionCookie(gw, await gw.token("rita", { roles: ["reviewer"] }));
    const first = await page("/console/decisions?subject=alice&action=repo.read&limit=2", cookie);
    expect(first.status).toBe(200);
    const older = /<a rel="next" href="([^"]+)"/.exec(first.text)?.[1]?.replaceAll("&amp;", "&");
    expect(older).toMatch(/subject=alice.*limit=2.*cursor=/);
    const second = await page(older ?? "", cookie);
    expect(second.status).toBe(200);
    const rowsOf = (text: string) => [...text.matchAll(/data-decision-id="([^"]+)"/g)].map((m) => m[1]);
    expect(rowsOf(first.text)).toHaveLength(2);
    expect(rowsOf(second.text).length).toBeGreaterThan(0);
    expect(rowsOf(second.text)).not.toContain(rowsOf(first.text)[0]);
  });

  it("pages the approvals queue past its first 50 requests", async () => {
    const id = await pendingApproval(gw);
    const stored = await gw.gateway.store.getApproval(id);
    if (!stored) throw new Error("no approval stored");
    const {
      status: _s,
      resolution: _r,
      decided_by: _b,
      decided_at: _a,
      reason: _x,
      reasons: _y,
      grant_jti: _j,
      grant: _g,
      ...request
    } = stored;
    for (let i = 0; i < 55; i++) await gw.gateway.store.createApproval({ ...request, id: `${id}-copy-${i}` });
    const { cookie } = await sessionCookie(gw, await gw.token("carol", { roles: ["maintainer"] }));
    const first = await page("/console/approvals", cookie);
    const next = /<a href="([^"]+)" data-next-page/.exec(first.text)?.[1]?.replaceAll("&amp;", "&");
    expect(next).toMatch(/cursor=/);
    const second = await page(next ?? "", cookie);
    expect(second.status).toBe(200);
    const idsOf = (text: string) => new Set([...text.matchAll(/copy-(\d+)/g)].map((m) => m[1]));
    const seen = new Set([...idsOf(first.text), ...idsOf(second.text)]);
    expect(seen.size).toBe(55);
  });
});

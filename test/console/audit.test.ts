/**
 * The console behind the one audit interceptor (issue 28), over real HTTP: its requests carry
 * Writ's own request id (the caller's kept beside it), a refusal it answers that nothing logged
 * is on the record like the API's, and one it logged itself (a refused sign-in) is not logged twice.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logEntries } from "../e2e/api.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { postForm, sessionCookie } from "./helpers.ts";

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});

afterAll(async () => {
  await gw?.close();
});

/** The entries of the request Writ answered with `answer` (by its own request id). */
async function entriesOf(answer: Response) {
  const own = answer.headers.get("x-request-id");
  expect(own).toMatch(/^[0-9a-f-]{36}$/);
  return (await logEntries(gw)).filter((e) => e.request_id === own);
}

describe("the console's audit", () => {
  it("puts a form refused for its synchronizer token on the record, with who and both request ids", async () => {
    const { cookie } = await sessionCookie(gw, await gw.token("rita", { roles: ["reviewer"] }));
    const trace = `rita-${randomUUID()}`;
    const refused = await postForm(
      gw,
      "/console/sign-out",
      { csrf: "forged" },
      { origin: gw.url, cookie, "x-request-id": trace },
    );
    expect(refused.status).toBe(403);
    expect(refused.headers.get("x-request-id")).not.toBe(trace);
    expect(await entriesOf(refused)).toMatchObject([
      {
        path: "writ/http",
        action: "POST /console/sign-out",
        subject: "rita",
        tenant: "demo",
        decision: "deny",
        error: "forbidden",
        caller_request_id: trace,
      },
    ]);
  });

  it("logs a refused sign-in once, under Writ's request id", async () => {
    const trace = `victor-${randomUUID()}`;
    const token = await gw.token("victor", { roles: ["developer"] });
    const refused = await postForm(
      gw,
      "/console/sign-in",
      { token },
      { origin: gw.url, "x-request-id": trace },
    );
    expect(refused.status).toBe(403);
    expect(await entriesOf(refused)).toMatchObject([
      {
        path: "writ/console",
        action: "console.sign_in",
        subject: "victor",
        decision: "deny",
        caller_request_id: trace,
      },
    ]);
  });

  it("puts a sign-in form without a token on the record as a malformed request", async () => {
    const refused = await postForm(gw, "/console/sign-in", {}, { origin: gw.url });
    expect(refused.status).toBe(400);
    expect(await entriesOf(refused)).toMatchObject([
      { path: "writ/http", action: "POST /console/sign-in", subject: null, error: "invalid_argument" },
    ]);
  });
});

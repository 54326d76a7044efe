/**
 * Helpers for console tests: a pending approval to decide, signing in over plain HTTP (for the
 * checks a browser would never let a page make), and Debian's Chromium driven by playwright-core.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import type { TestGateway } from "../support/gateway.ts";

export const CHROMIUM = "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM);

if (!hasChromium) {
  console.warn(
    `${CHROMIUM} not found: the console's browser tests are skipped (.ci/run installs Debian's chromium; locally: apt-get install chromium)`,
  );
}

/**
 * Launches headless Chromium. playwright gives each launch a fresh temporary profile (the
 * --user-data-dir it manages), removed on close.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Runs `work` on a page of a fresh browser context (its own cookies), closed afterwards. */
export async function withPage<T>(browser: Browser, work: (page: Page) => Promise<T>): Promise<T> {
  const context = await browser.newContext();
  try {
    return await work(await context.newPage());
  } finally {
    await context.close();
  }
}

/** Signs in through the console's sign-in page, as a person would. */
export async function signIn(page: Page, gw: TestGateway, token: string): Promise<void> {
  await page.goto(`${gw.url}/console/sign-in`);
  await page.fill("textarea[name=token]", token);
  await Promise.all([page.waitForLoadState("load"), page.click("button[type=submit]")]);
}

export { pendingApproval } from "../e2e/api.ts";

/** POSTs a form to the console the way a browser (or a forger) would. */
export function postForm(
  gw: TestGateway,
  route: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${gw.url}${route}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/** Signs in over HTTP from the console's own origin; the session cookie (`name=value`). */
export async function sessionCookie(
  gw: TestGateway,
  token: string,
): Promise<{ cookie: string; setCookie: string }> {
  const answer = await postForm(gw, "/console/sign-in", { token }, { origin: gw.url });
  const setCookie = answer.headers.get("set-cookie") ?? "";
  if (answer.status !== 303 || setCookie === "") {
    throw new Error(`sign-in failed: ${answer.status} ${await answer.text()}`);
  }
  return { cookie: setCookie.split(";")[0] ?? "", setCookie };
}

/** The synchronizer token in a console page's forms. */
export function csrfTokenIn(page: string): string {
  const token = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  if (token === undefined) throw new Error("no csrf token in the page");
  return token;
}

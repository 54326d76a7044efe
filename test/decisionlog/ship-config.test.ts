/**
 * `decision_log.ship` in the configuration: the README's example parses as documented (OPA's
 * defaults where it says so, the URL entries go to), and the mistakes an operator can make are
 * refused at start with the path that is wrong.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { ConfigError, parseConfig } from "../../src/config/index.ts";
import { shipUrl } from "../../src/decisionlog/ship/index.ts";
import { repoRoot } from "../support/paths.ts";

async function readmeExample(): Promise<unknown> {
  const readme = await readFile(path.join(repoRoot, "README.md"), "utf8");
  const section = readme.split("## Shipping the decision log to a decision-log service")[1] ?? "";
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  expect(yaml).toBeDefined();
  return parseYaml(yaml ?? "");
}

it("parses the README's example: POSTs to <service><resource>, the token from credentials:", async () => {
  const config = parseConfig(await readmeExample(), repoRoot);
  const ship = config.decision_log.ship;
  expect(ship).toMatchObject({
    resource: "/logs",
    credentials_ref: "decision-logs",
    headers: { "X-Source": "writ" },
    reporting: { upload_size_limit_bytes: 32768, min_delay_seconds: 1, max_delay_seconds: 60 },
    timeout_ms: 10_000,
    lease_s: 30,
    shutdown_flush_ms: 5000,
  });
  expect(ship && shipUrl(ship)).toBe("https://logs.internal.example/logs");
  expect(parseConfig({}, repoRoot).decision_log.ship).toBeUndefined();
});

it.each([
  [{ service: "http://logs.example.com" }, /\/decision_log\/ship\/service: expected an https:\/\/ URL/],
  [{ service: "https://l.test", resource: "logs" }, /\/decision_log\/ship\/resource: must be a path/],
  [
    { service: "https://l.test", credentials_ref: "nope" },
    /\/decision_log\/ship\/credentials_ref: no credentials named "nope"/,
  ],
  [
    { service: "https://l.test", reporting: { min_delay_seconds: 5, max_delay_seconds: 1 } },
    /min_delay_seconds must not exceed max_delay_seconds/,
  ],
  [{ service: "https://l.test", lease_s: 1 }, /lease_s must be at least twice timeout_ms/],
  [
    { service: "https://l.test", headers: { "Content-Type": "text/plain" } },
    /\/decision_log\/ship\/headers\/Content-Type: Content-Type, Content-Encoding and Content-Length are set by Writ/,
  ],
  [
    { service: "https://l.test", headers: { "bad header": "x" } },
    /\/decision_log\/ship\/headers\/bad header: must be an HTTP header name/,
  ],
])("refuses %j", (ship, message) => {
  expect(() => parseConfig({ decision_log: { ship } }, repoRoot)).toThrow(ConfigError);
  expect(() => parseConfig({ decision_log: { ship } }, repoRoot)).toThrow(message);
});

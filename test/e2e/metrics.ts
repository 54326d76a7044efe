import { expect } from "vitest";
import type { TestGateway } from "../support/gateway.ts";

/** GET /metrics as text (checked to be the Prometheus text format). */
export async function metricsText(gw: TestGateway): Promise<string> {
  const answer = await gw.request("GET", "/metrics");
  expect(answer.status).toBe(200);
  expect(answer.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return answer.text;
}

/** The value of one sample (`name{labels}` exactly as rendered), 0 when the series does not exist yet. */
export function sample(text: string, series: string): number {
  for (const line of text.split("\n")) {
    if (line.startsWith(`${series} `)) {
      const value = Number(line.slice(series.length + 1));
      if (Number.isNaN(value)) throw new Error(`not a number: ${line}`);
      return value;
    }
  }
  return 0;
}

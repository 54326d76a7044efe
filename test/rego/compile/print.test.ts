/**
 * `print` as OPA compiles it (`rewritePrintCalls`): each argument is captured in a set, so an
 * argument that is undefined (a ref, or a call nested in it) prints `<undefined>` and the body
 * goes on. Built to Wasm and evaluated with the SDK, which prints through `console.log`.
 */
import { describe, expect, it } from "vitest";
import { evaluate } from "./evaluate.ts";

async function printed(
  source: string,
  query: string,
  input: unknown,
): Promise<{ lines: string[]; result: unknown[] }> {
  const lines: string[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => {
    lines.push(args.map(String).join(" "));
  };
  try {
    return { result: await evaluate(source, query, input), lines };
  } finally {
    console.log = log;
  }
}

describe("print", () => {
  const source = `package t

p if {
  print("count:", count(input.missing), "names:", input.names[_])
  true
}
`;

  it("prints an undefined argument as <undefined>, also a nested call's, and carries on", async () => {
    const run = await printed(source, "x = data.t.p", { names: ["a"] });
    expect(run.lines).toEqual(["count: <undefined> names: a"]);
    expect(run.result).toEqual([{ x: true }]);
  });
});

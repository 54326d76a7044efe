/** `--stdio "<command line>"`: split as a shell splits a simple command, never run by one. */
import { describe, expect, it } from "vitest";
import { parseCommandLine } from "../../src/cli/contracts/command-line.ts";
import { WritError } from "../../src/core/errors.ts";

describe("parseCommandLine", () => {
  it("splits words, quotes and escapes, with NAME=value words before the program as its environment", () => {
    expect(parseCommandLine("npx -y @modelcontextprotocol/server-memory")).toEqual({
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-memory"],
      env: {},
    });
    expect(parseCommandLine(`A=1 B="two words" node 'my server.js' "say \\"hi\\"" a\\ b '' x=y`)).toEqual({
      command: "node",
      args: ["my server.js", 'say "hi"', "a b", "", "x=y"],
      env: { A: "1", B: "two words" },
    });
    expect(parseCommandLine(`node -e "process.exit(3)"`).args).toEqual(["-e", "process.exit(3)"]);
  });

  it.each([
    ["cat x | node s.js", /"\|" is shell syntax/],
    ["node s.js > log", /">" is shell syntax/],
    ["node s.js; rm -rf x", /";" is shell syntax/],
    ["node $HOME/s.js", /"\$" is shell syntax/],
    [`node "$(pwd)/s.js"`, /substitutions/],
    ["node 's.js", /a ' quote is not closed/],
    ["A=1", /there is no command in it/],
    ["   ", /there is no command in it/],
  ])("refuses %j, saying what to give instead", (line, message) => {
    let caught: unknown;
    try {
      parseCommandLine(line);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(WritError);
    if (!(caught instanceof WritError)) return;
    expect(caught.category).toBe("invalid_argument");
    expect(caught.message).toMatch(message);
    expect(caught.suggestedFix).toContain("give one command with its arguments");
  });
});

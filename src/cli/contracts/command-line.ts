/**
 * `--stdio "<command line>"`: one command line split into words as a POSIX shell splits a simple
 * command (blanks; '…' literal; "…" with \" \\ \$ \` escapes; \ outside quotes), with leading
 * `NAME=value` words as its environment. It is not run by a shell: pipes, redirections,
 * substitutions and `;`/`&&` are refused with a message rather than passed as arguments.
 */
import { WritError } from "../../core/errors.ts";

export interface CommandLine {
  command: string;
  args: string[];
  env: Record<string, string>;
}

const OPERATORS = new Set(["|", "&", ";", "<", ">", "(", ")", "`"]);

function refuse(line: string, why: string): WritError {
  return new WritError("invalid_argument", `--stdio ${JSON.stringify(line)}: ${why}`, {
    suggestedFix:
      'give one command with its arguments, e.g. --stdio "npx -y @modelcontextprotocol/server-memory"; for a shell pipeline, run a shell: --stdio "sh -c \'…\'"',
  });
}

/** Splits `line` (see the module's comment); throws `invalid_argument` when it is not one command. */
export function parseCommandLine(line: string): CommandLine {
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line.charAt(i);
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word += char;
    } else if (quote === '"') {
      if (char === '"') quote = undefined;
      else if (char === "\\" && '"\\$`'.includes(line.charAt(i + 1)) && i + 1 < line.length)
        word += line.charAt(++i);
      else if (char === "$" || char === "`") throw refuse(line, "substitutions ($…, `…`) need a shell");
      else word += char;
    } else if (char === " " || char === "\t" || char === "\n") {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (char === "'" || char === '"') {
      quote = char;
      word ??= "";
    } else if (char === "\\") {
      if (i + 1 >= line.length) throw refuse(line, "it ends with a lone backslash");
      word = (word ?? "") + line.charAt(++i);
    } else if (OPERATORS.has(char) || char === "$") {
      throw refuse(line, `${JSON.stringify(char)} is shell syntax, and the command is not run by a shell`);
    } else {
      word = (word ?? "") + char;
    }
  }
  if (quote !== undefined) throw refuse(line, `a ${quote} quote is not closed`);
  if (word !== undefined) words.push(word);
  const env: Record<string, string> = {};
  let first = 0;
  for (const candidate of words) {
    const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(candidate);
    if (assignment === null) break;
    env[assignment[1] ?? ""] = assignment[2] ?? "";
    first += 1;
  }
  const [command, ...args] = words.slice(first);
  if (command === undefined) throw refuse(line, "there is no command in it");
  return { command, args, env };
}

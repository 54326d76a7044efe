/**
 * The conformance runner's command (`cli.ts` runs it): `npm run conformance -- <folder> [--stage parse|compile|eval] [--json <file>] [--exceptions <file>] [--min-pass <percent>]`
 *
 * Walks a folder of OPA-format YAML case files, runs every case through the chosen stage and
 * prints per-folder pass/fail/skip counts with a closing `N passed, N failed, N skipped` line.
 * Failing cases are the scoreboard, not an error: the exit code is 0 unless the run could not
 * happen (2) or the overall pass rate is below `--min-pass` (1).
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadConformanceCases, loadExceptions } from "./cases.ts";
import { compileStage } from "./compile-stage.ts";
import { evalStage } from "./eval-stage.ts";
import { parseStage } from "./parse-stage.ts";
import { formatReport, runConformance, type Stage } from "./runner.ts";

const usage =
  "usage: npm run conformance -- <folder> [--stage parse|compile|eval] [--json <file>] [--exceptions <file>]\n" +
  "  <folder>        a folder of OPA YAML case files, e.g. ../shared/conformance/opa/cases\n" +
  "  --stage         parse (default): every module, query and input term must parse;\n" +
  "                  compile: modules and query compile (or report the expected rego_* error);\n" +
  "                  eval: compiled to Wasm and evaluated with @open-policy-agent/opa-wasm\n" +
  "  --json          also write the report as JSON to <file>\n" +
  "  --exceptions    notes to skip (default: wasm-e2e-exceptions.yaml next to <folder>, eval stage only)\n" +
  "  --min-pass      exit 1 when fewer than this percentage of the cases run pass\n" +
  "  --filter        run only the cases whose note contains this text";

const stages: Record<string, Stage | undefined> = {
  parse: parseStage,
  compile: compileStage,
  eval: evalStage,
};

export async function main(argv: string[]): Promise<number> {
  let args: ReturnType<typeof parseCli>;
  try {
    args = parseCli(argv);
  } catch (error) {
    console.error(`conformance: ${error instanceof Error ? error.message : String(error)}\n${usage}`);
    return 2;
  }
  const { folder, stageName, json, exceptionsFile, minPass, filter } = args;
  const stage = stages[stageName];
  if (!stage) {
    console.error(
      `conformance: the ${stageName} stage is not available in this build; choose one of: ${Object.keys(stages).join(", ")}`,
    );
    return 2;
  }
  if (!existsSync(folder)) {
    console.error(`conformance: ${folder} does not exist; pass a folder of OPA YAML case files`);
    return 2;
  }

  const loaded = await loadConformanceCases(folder);
  const cases = filter ? loaded.cases.filter((c) => c.case.note.includes(filter)) : loaded.cases;
  const broken = filter ? [] : loaded.broken;
  const exceptions =
    stageName === "eval" && exceptionsFile && existsSync(exceptionsFile)
      ? await loadExceptions(exceptionsFile)
      : undefined;
  const report = await runConformance(stage, cases, broken, exceptions ? { exceptions } : {});

  console.log(formatReport(report));
  if (json) {
    await writeFile(json, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`report written to ${json}`);
  }
  const ran = report.passed + report.failed;
  const passRate = ran === 0 ? 100 : (100 * report.passed) / ran;
  if (minPass !== undefined && passRate < minPass) {
    console.error(`conformance: pass rate ${passRate.toFixed(1)}% is below --min-pass ${minPass}%`);
    return 1;
  }
  return 0;
}

function parseCli(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      stage: { type: "string", default: "parse" },
      json: { type: "string" },
      exceptions: { type: "string" },
      "min-pass": { type: "string" },
      filter: { type: "string" },
    },
  });
  if (positionals.length !== 1) throw new Error("expected exactly one folder");
  const folder = positionals[0]!;
  const minPassText = values["min-pass"];
  const minPass = minPassText === undefined ? undefined : Number(minPassText);
  if (minPass !== undefined && !(minPass >= 0 && minPass <= 100)) {
    throw new Error(`--min-pass takes a percentage from 0 to 100, not ${JSON.stringify(minPassText)}`);
  }
  return {
    folder,
    stageName: values.stage ?? "parse",
    json: values.json,
    minPass,
    filter: values.filter,
    exceptionsFile:
      values.exceptions ?? path.join(path.dirname(path.resolve(folder)), "wasm-e2e-exceptions.yaml"),
  };
}

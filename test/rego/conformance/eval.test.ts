import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConformanceCases, loadExceptions } from "../../../src/rego/conformance/cases.ts";
import { evalStage } from "../../../src/rego/conformance/eval-stage.ts";
import { formatReport, runConformance } from "../../../src/rego/conformance/runner.ts";
import { conformanceCasesDir, hasConformanceCases } from "../../support/paths.ts";

/** Every folder must pass this share of the cases it runs, unless it is listed below. */
const FOLDER_RATE = 0.95;

/**
 * Folders still below {@link FOLDER_RATE}, each held to the pass rate (percent) it has reached.
 * A floor only rises: when a folder improves, raise its floor (or remove it once it reaches
 * 95%). Every case still runs and counts; nothing here skips one.
 */
const FLOORS: Record<string, number> = {
  aggregates: 94.5,
  arithmetic: 87.8,
  array: 88.2,
  base64builtins: 75,
  bitsand: 0,
  bitsnegate: 0,
  bitsor: 0,
  bitsshiftleft: 0,
  bitsshiftright: 0,
  bitsxor: 0,
  casts: 27.2,
  cryptohmacequal: 0,
  cryptohmacmd5: 0,
  cryptohmacsha1: 0,
  cryptohmacsha256: 0,
  cryptohmacsha512: 0,
  cryptomd5: 0,
  cryptosha1: 0,
  globquotemeta: 0,
  globsmatch: 0,
  hexbuiltins: 0,
  jsonbuiltins: 21,
  jsonfilter: 0,
  jsonfilteridempotent: 0,
  jsonpatch: 0,
  jsonremove: 0,
  jsonremoveidempotent: 0,
  jsonschema: 0,
  jwtbuiltins: 0,
  jwtdecodeverify: 0,
  jwtencodesign: 0,
  jwtencodesignheadererrors: 0,
  jwtencodesignraw: 0,
  jwtverifyrsa: 0,
  netcidrcontains: 90.9,
  netcidrcontainsmatches: 0,
  netcidrexpand: 0,
  netcidrintersects: 0,
  netcidrisvalid: 0,
  netcidrmerge: 0,
  numbersrangestep: 75,
  objectget: 94.1,
  objectkeys: 85.7,
  objectremove: 52.6,
  objectunion: 81.8,
  objectunionn: 83.3,
  regexfind: 0,
  regexfindallstringsubmatch: 0,
  regexisvalid: 0,
  regexmatchtemplate: 0,
  regexreplace: 0,
  semvercompare: 50,
  semverisvalid: 50,
  sprintf: 0,
  time: 6,
  units: 41.1,
  urlbuiltins: 0,
  uuid: 0,
  walkbuiltin: 0,
};

/** The pass rate over all cases run; it only rises. */
const OVERALL_FLOOR = 0.697;

describe.skipIf(!hasConformanceCases)("conformance, eval stage through the opa-wasm SDK", () => {
  it("holds every folder at 95% (or its floor) and the whole set at its floor", async () => {
    const { cases, broken } = await loadConformanceCases(conformanceCasesDir);
    const exceptions = await loadExceptions(
      path.join(path.dirname(conformanceCasesDir), "wasm-e2e-exceptions.yaml"),
    );
    const report = await runConformance(evalStage, cases, broken, { exceptions });
    console.log(formatReport(report));
    const rate = (t: { passed: number; failed: number }) => t.passed / Math.max(1, t.passed + t.failed);
    const below = Object.entries(report.by_dir)
      .filter(([dir, t]) => 100 * rate(t) < (FLOORS[dir] ?? 100 * FOLDER_RATE) - 1e-9)
      .map(([dir, t]) => `${dir}: ${(100 * rate(t)).toFixed(1)}% < ${FLOORS[dir] ?? 100 * FOLDER_RATE}%`);
    expect(below).toEqual([]);
    expect(rate(report)).toBeGreaterThanOrEqual(OVERALL_FLOOR);
  }, 240_000);
});

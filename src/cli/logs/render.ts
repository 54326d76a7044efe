/** How `writ logs` prints entries for people: a table row per entry, a readable layout for one. */
import type { CheckpointReport, VerifyResult } from "../../decisionlog/index.ts";
import { loggedResourceRevision } from "../../decisionlog/query.ts";
import type { DecisionLogEntry } from "../../store/types.ts";

export const outputFormats = ["table", "ndjson"] as const;
export type OutputFormat = (typeof outputFormats)[number];

interface Column {
  title: string;
  /** The width `tail` (which prints as entries come) gives it; 0: as wide as its text. */
  width: number;
  /** Whether a terminal too narrow for the table may cut it (identifiers are never cut). */
  shrinks: boolean;
  cell: (e: DecisionLogEntry) => string;
}

const columns: Column[] = [
  { title: "SEQ", width: 6, shrinks: false, cell: (e) => String(e.seq) },
  { title: "TIME", width: 24, shrinks: false, cell: (e) => e.timestamp },
  { title: "DECISION", width: 21, shrinks: false, cell: (e) => e.decision },
  { title: "SUBJECT", width: 16, shrinks: true, cell: (e) => `${e.tenant ?? "-"}/${e.subject ?? "-"}` },
  { title: "ACTION", width: 20, shrinks: true, cell: (e) => e.action ?? "-" },
  {
    title: "RESOURCE",
    width: 22,
    shrinks: true,
    cell: (e) => (e.resource ? `${e.resource.type}/${e.resource.id}` : "-"),
  },
  { title: "REASONS", width: 28, shrinks: true, cell: (e) => reasonCodes(e) },
  { title: "DECISION ID", width: 0, shrinks: false, cell: (e) => e.decision_id },
];

const GAP = 2;

/**
 * A page of entries as a table, header first. Each column is as wide as its widest cell, so
 * nothing is cut; given a terminal's width (`columns`), the columns that may shrink (subject,
 * action, resource, reasons) are narrowed, widest first, until the table fits, and cut cells end
 * in "…". `writ logs query --wide` passes no width.
 */
export function table(entries: readonly DecisionLogEntry[], width?: number): string[] {
  const cells = entries.map((e) => columns.map((c) => c.cell(e)));
  const widths = columns.map((c, i) => Math.max(c.title.length, ...cells.map((row) => row[i]!.length)));
  if (width !== undefined) {
    const total = () => widths.reduce((sum, w) => sum + w, 0) + GAP * (widths.length - 1);
    while (total() > width) {
      let widest = -1;
      for (const [i, c] of columns.entries()) {
        if (c.shrinks && widths[i]! > c.title.length && (widest < 0 || widths[i]! > widths[widest]!))
          widest = i;
      }
      if (widest < 0) break;
      widths[widest]!--;
    }
  }
  const line = (row: readonly string[]) =>
    row
      .map((text, i) => {
        const w = widths[i]!;
        const cut = text.length > w ? `${text.slice(0, w - 1)}…` : text;
        return i === row.length - 1 ? cut : cut.padEnd(w + GAP);
      })
      .join("");
  return [line(columns.map((c) => c.title)), ...cells.map(line)];
}

function reasonCodes(e: DecisionLogEntry): string {
  const codes = e.reasons.map((r) => r.code);
  if (e.error !== null && !codes.includes(e.error)) codes.push(e.error);
  return codes.join(",") || "-";
}

function pad(text: string, width: number): string {
  if (width === 0) return text;
  const cut = text.length > width - 1 ? `${text.slice(0, width - 2)}…` : text;
  return cut.padEnd(width);
}

export function tableHeader(): string {
  return columns.map((c) => pad(c.title, c.width)).join("");
}

export function tableRow(entry: DecisionLogEntry): string {
  return columns.map((c) => pad(c.cell(entry), c.width)).join("");
}

/** One entry as the chosen format prints it (the table header is printed separately). */
export function entryLine(entry: DecisionLogEntry, format: OutputFormat): string {
  return format === "ndjson" ? JSON.stringify(entry) : tableRow(entry);
}

function indentJson(value: unknown): string {
  return JSON.stringify(value, null, 2)
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}

/** The full entry as a readable layout: what was asked, what the policy said and why, what was hidden. */
export function entryReport(e: DecisionLogEntry): string {
  const lines = [
    `decision ${e.decision_id}  (seq ${e.seq})`,
    `  time            ${e.timestamp}`,
    `  outcome         ${e.decision}${e.error === null ? "" : `  (error: ${e.error})`}`,
    `  subject         ${e.subject ?? "-"}  tenant ${e.tenant ?? "-"}`,
    `  action          ${e.action ?? "-"}`,
    `  resource        ${e.resource ? `${e.resource.type}/${e.resource.id}` : "-"}${resourceRevisionOf(e)}`,
    `  policy          ${e.path}  revision ${e.bundles.writ.revision}`,
    `  grant           ${e.grant_jti ?? "-"}`,
    `  approval        ${e.approval_id ?? "-"}`,
    `  request         ${e.request_id}${e.caller_request_id === undefined ? "" : `  (the caller's ${e.caller_request_id})`}`,
    "reasons",
    ...(e.reasons.length === 0
      ? ["  (none)"]
      : e.reasons.map(
          (r) => `  ${r.code}: ${r.message}${r.visible_to_model ? "" : "  [withheld from the model]"}`,
        )),
    "conditions",
    ...(e.conditions.length === 0 ? ["  (none)"] : e.conditions.map((c) => `  ${JSON.stringify(c)}`)),
    "redacted from the stored input",
    `  erased          ${e.erased.join(", ") || "-"}`,
    `  masked          ${e.masked.join(", ") || "-"}`,
    "timings",
    ...(Object.keys(e.metrics).length === 0
      ? ["  (none)"]
      : Object.entries(e.metrics).map(([name, value]) => `  ${name.padEnd(30)}${value}`)),
    "input (as stored: redacted)",
    indentJson(e.input ?? null),
    "result",
    e.result === undefined ? "  (no policy ran)" : indentJson(e.result),
    "chain",
    `  prev_hash       ${e.prev_hash}`,
    `  hash            ${e.hash}`,
  ];
  return lines.join("\n");
}

/** "  revision N" when the stored input says which resource revision the policy saw. */
export function resourceRevisionOf(e: DecisionLogEntry): string {
  const revision = loggedResourceRevision(e);
  return revision === undefined ? "" : `  revision ${revision}`;
}

const breakExplanations = {
  hash_mismatch: "the entry's content does not match its hash: it was edited after it was written",
  broken_link:
    "the entry's prev_hash is not the previous entry's hash: entries were removed, inserted or reordered",
  missing_entries: "this seq is missing: entries were deleted",
  unreadable: "the stored row does not parse: it was changed outside Writ",
} as const;

/** One line saying whether the chain holds, and where and why it breaks. */
export function verifySummary(result: VerifyResult, checkpointsDisagree = false): string {
  if (result.ok && checkpointsDisagree)
    return `broken: the chain of ${result.entries} entries links up (head hash ${result.head_hash}), but checkpoints disagree with it`;
  if (result.ok) return `intact: ${result.entries} entries, head hash ${result.head_hash}`;
  const b = result.first_broken;
  return `broken at seq ${b.seq}${b.decision_id === null ? "" : ` (decision ${b.decision_id})`}: ${b.reason}: ${breakExplanations[b.reason]}; ${result.entries_checked} entries before it verify`;
}

/** What `writ logs verify` found checking checkpoints: how many, the newest, each problem. */
export function checkpointSummary(report: CheckpointReport): string {
  const counts = Object.entries(report.checked);
  const total = counts.reduce((sum, [, n]) => sum + n, 0);
  const lines = [
    total === 0
      ? "checkpoints: none found (nothing anchors the head yet: the gateway writes one every interval and at shutdown)"
      : `checkpoints: ${total} checked (${counts.map(([source, n]) => `${source} ${n}`).join(", ")})${
          report.newest === null
            ? ""
            : `; newest valid at seq ${report.newest.seq}, signed ${report.newest.time} (${report.newest.source})`
        }`,
  ];
  for (const p of report.problems) {
    const at =
      p.seq === null
        ? p.line === undefined
          ? ""
          : ` line ${p.line}`
        : ` of seq ${p.seq} (signed ${p.time})`;
    lines.push(`  checkpoint${at} from ${p.source}: ${p.reason}: ${p.detail}`);
  }
  return lines.join("\n");
}

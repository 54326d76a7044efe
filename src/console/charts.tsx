/**
 * Small server-rendered SVG charts for the decision list: decisions per outcome over time
 * (stacked bars) and the most denied actions (horizontal bars). No scripts, no chart library.
 */
import type { FC } from "hono/jsx";
import { decisionOutcomes } from "../decisionlog/query.ts";
import type { DecisionLogEntry } from "../store/types.ts";

const colors: Record<(typeof decisionOutcomes)[number], string> = {
  allow: "#1e7b34",
  deny: "#b3261e",
  require_approval: "#a15c00",
  allow_with_conditions: "#5b3fb3",
  error: "#6b6b6b",
};

const BUCKETS = 12;
const WIDTH = 480;
const HEIGHT = 170;
const PLOT_TOP = 10;
const PLOT_BOTTOM = 140;

/** Legend entries laid out left to right, each as wide as its label (about 5.5 px a character at 10 px). */
const legend: Array<{ outcome: (typeof decisionOutcomes)[number]; label: string; x: number }> = [];
for (const outcome of decisionOutcomes) {
  const last = legend.at(-1);
  const x = last === undefined ? 0 : last.x + 12 + last.label.length * 5.5 + 14;
  legend.push({ outcome, label: outcome.replaceAll("_", " "), x });
}

type Bucket = Record<(typeof decisionOutcomes)[number], number>;

function emptyBucket(): Bucket {
  return { allow: 0, deny: 0, require_approval: 0, allow_with_conditions: 0, error: 0 };
}

function shortTime(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").slice(5, 16);
}

export const OutcomesOverTime: FC<{ entries: DecisionLogEntry[] }> = ({ entries }) => {
  const times = entries.map((e) => Date.parse(e.timestamp));
  const start = Math.min(...times);
  const end = Math.max(...times);
  const span = Math.max(end - start, 1);
  const buckets = Array.from({ length: BUCKETS }, emptyBucket);
  for (const [i, e] of entries.entries()) {
    const index = Math.min(BUCKETS - 1, Math.floor(((times[i] ?? start) - start) / (span / BUCKETS)));
    const bucket = buckets[index];
    if (bucket) bucket[e.decision]++;
  }
  const most = Math.max(1, ...buckets.map((b) => Object.values(b).reduce((a, n) => a + n, 0)));
  const barWidth = WIDTH / BUCKETS;
  const scale = (PLOT_BOTTOM - PLOT_TOP) / most;
  return (
    <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label="Decisions per outcome over time">
      <title>Decisions per outcome over time</title>
      {buckets.map((bucket, i) => {
        let y = PLOT_BOTTOM;
        return decisionOutcomes.map((outcome) => {
          const h = bucket[outcome] * scale;
          y -= h;
          return h > 0 ? (
            <rect x={i * barWidth + 2} y={y} width={barWidth - 4} height={h} fill={colors[outcome]}>
              <title>{`${bucket[outcome]} ${outcome}`}</title>
            </rect>
          ) : null;
        });
      })}
      <line x1="0" y1={PLOT_BOTTOM} x2={WIDTH} y2={PLOT_BOTTOM} stroke="#999" />
      <text x="0" y={PLOT_BOTTOM + 14} font-size="10" fill="#5b6672">
        {shortTime(start)}
      </text>
      <text x={WIDTH} y={PLOT_BOTTOM + 14} font-size="10" fill="#5b6672" text-anchor="end">
        {shortTime(end)}
      </text>
      <text x={WIDTH / 2} y={PLOT_BOTTOM + 14} font-size="10" fill="#5b6672" text-anchor="middle">
        {`max ${most} per bar`}
      </text>
      {legend.map(({ outcome, label, x }) => (
        <g>
          <rect x={x} y={HEIGHT - 12} width="9" height="9" fill={colors[outcome]} />
          <text x={x + 12} y={HEIGHT - 4} font-size="10" fill="#1d232a">
            {label}
          </text>
        </g>
      ))}
    </svg>
  );
};

const TOP = 5;

export const TopDeniedActions: FC<{ entries: DecisionLogEntry[] }> = ({ entries }) => {
  const counts = new Map<string, number>();
  for (const e of entries) {
    if (e.decision === "deny")
      counts.set(e.action ?? "(no action)", (counts.get(e.action ?? "(no action)") ?? 0) + 1);
  }
  const top = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, TOP);
  const most = Math.max(1, ...top.map(([, n]) => n));
  const labelWidth = 170;
  const rowHeight = 26;
  if (top.length === 0) return <p class="muted">No denials among these decisions.</p>;
  return (
    <svg viewBox={`0 0 ${WIDTH} ${top.length * rowHeight + 6}`} role="img" aria-label="Most denied actions">
      <title>Most denied actions</title>
      {top.map(([action, n], i) => (
        <g>
          <text x="0" y={i * rowHeight + 17} font-size="12" fill="#1d232a">
            {action.length > 26 ? `${action.slice(0, 25)}…` : action}
          </text>
          <rect
            x={labelWidth}
            y={i * rowHeight + 5}
            width={((WIDTH - labelWidth - 40) * n) / most}
            height="16"
            fill={colors.deny}
          />
          <text
            x={labelWidth + ((WIDTH - labelWidth - 40) * n) / most + 4}
            y={i * rowHeight + 17}
            font-size="12"
          >
            {String(n)}
          </text>
        </g>
      ))}
    </svg>
  );
};

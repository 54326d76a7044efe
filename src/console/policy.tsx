/**
 * "Policy changes" (issue 19): the archived policy revisions over time (the live and the shadow
 * one marked), and for a chosen candidate the replay of the tenant's recent decisions against it,
 * as a table of the decisions it would change.
 */
import type { FC } from "hono/jsx";
import type { ReplayedDecision } from "../replay/index.ts";
import { DecisionBadge, Layout } from "./layout.tsx";
import type { PolicyChanges, PolicyChangesQuery } from "./policy-changes.ts";
import { SHOWN } from "./policy-changes.ts";
import type { Viewer } from "./session.ts";

const codes = (reasons: ReadonlyArray<{ code: string }>) => reasons.map((r) => r.code).join(", ") || "—";

const ChangedRows: FC<{ rows: ReplayedDecision[] }> = ({ rows }) => (
  <table>
    <thead>
      <tr>
        <th>Time</th>
        <th>Subject</th>
        <th>Action</th>
        <th>Decided</th>
        <th>Candidate</th>
        <th>Reasons then</th>
        <th>Reasons now</th>
      </tr>
    </thead>
    <tbody>
      {rows.map((r) => (
        <tr data-decision-id={r.decision_id}>
          <td>
            <a href={`/console/decisions/${encodeURIComponent(r.decision_id)}`}>{r.timestamp}</a>
          </td>
          <td>{r.subject ?? "—"}</td>
          <td>{r.action ?? "—"}</td>
          <td>
            <DecisionBadge decision={r.before.decision} />
          </td>
          <td>
            <DecisionBadge decision={r.after.decision} />
          </td>
          <td>{codes(r.before.reasons)}</td>
          <td>{codes(r.after.reasons)}</td>
        </tr>
      ))}
    </tbody>
  </table>
);

export const PolicyChangesPage: FC<{ viewer: Viewer; query: PolicyChangesQuery; changes: PolicyChanges }> = ({
  viewer,
  query,
  changes,
}) => {
  const replay = changes.replay;
  return (
    <Layout title="Policy changes" viewer={viewer}>
      <h1>Policy changes</h1>
      <p class="muted">
        Every policy revision Writ loaded, newest first. Replay one against the decisions of the last{" "}
        {query.days} days in your tenant to see what it would change before it ships.
      </p>
      <table>
        <thead>
          <tr>
            <th>Revision</th>
            <th>First loaded</th>
            <th>From</th>
            <th>Size</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {changes.revisions.map((r) => (
            <tr data-revision={r.id}>
              <td>
                <code>{r.id}</code>
                {r.id === changes.live ? " (live)" : ""}
                {r.id === changes.shadow ? " (shadow)" : ""}
              </td>
              <td>{r.loaded_at}</td>
              <td>
                {r.kind} {r.origin}
              </td>
              <td>{r.size} bytes</td>
              <td>
                <a
                  href={`/console/policy?${new URLSearchParams({ candidate: r.id, days: String(query.days) })}`}
                >
                  Replay against it
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {replay && (
        <section class="card" id="replay">
          <h2>
            Revision <code>{replay.candidate.id}</code> on the last {query.days} days
          </h2>
          <p>
            {replay.summary.considered} decisions replayed ({replay.summary.exact} with their whole input):{" "}
            <strong>{replay.summary.changed} would change</strong>
            {replay.summary.inexact.count > 0
              ? `; ${replay.summary.inexact.count} had a redacted input and cannot be replayed exactly (${replay.summary.inexact.changed} came out different)`
              : ""}
            {replay.summary.not_replayable > 0 ? `; ${replay.summary.not_replayable} have no input` : ""}.
          </p>
          <ul>
            {Object.entries(replay.summary.transitions).map(([transition, count]) => (
              <li>
                {transition}: {count}
              </li>
            ))}
          </ul>
          {replay.changed.length > 0 ? (
            <>
              <h3>
                Decisions it would change{replay.summary.changed > SHOWN ? ` (the newest ${SHOWN})` : ""}
              </h3>
              <ChangedRows rows={replay.changed} />
            </>
          ) : (
            <p>No decision would change.</p>
          )}
          {replay.inexact.length > 0 && (
            <>
              <h3>Different over a redacted input (may or may not change)</h3>
              <ChangedRows rows={replay.inexact} />
            </>
          )}
        </section>
      )}
    </Layout>
  );
};

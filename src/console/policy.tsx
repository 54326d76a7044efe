/**
 * "Policy changes" (issues 19, 31): the archived policy revisions over time (the live and the
 * shadow one marked), a form to upload a candidate policy (a folder's files or a bundle), and for
 * a chosen or uploaded candidate the replay of the tenant's recent decisions against it, as a
 * table of the decisions it would change, and the diff of its sources against the live revision.
 */
import type { FC } from "hono/jsx";
import type { ReplayedDecision } from "../replay/index.ts";
import { DecisionBadge, Layout } from "./layout.tsx";
import type { PolicyChanges, PolicyChangesQuery } from "./policy-changes.ts";
import { SHOWN } from "./policy-changes.ts";
import type { Viewer } from "./session.ts";
import type { FileDiff } from "./source-diff.ts";

const style = `
.upload { display:flex; flex-wrap:wrap; gap:.6rem 1rem; align-items:flex-end; }
.upload label { display:flex; flex-direction:column; font-size:.85rem; color:var(--muted); }
.problems { border-left:4px solid var(--deny); background:#fff; padding:.4rem .8rem; }
.problems li { font: 13px/1.5 ui-monospace, monospace; }
.diff { margin:.4rem 0 1rem; border:1px solid var(--line); border-radius:4px; overflow:auto; }
.diff h4 { margin:0; padding:.3rem .6rem; background:var(--bg); border-bottom:1px solid var(--line); font-size:.9rem; }
.diff table { font: 12.5px/1.45 ui-monospace, monospace; }
.diff td { border:0; padding:0 .5rem; white-space:pre; }
.diff td.n { color:var(--muted); text-align:right; width:3.5rem; user-select:none; }
.diff tr.added td { background:#e6f4ea; } .diff tr.removed td { background:#fbe9e7; }
.diff tr.gap td { color:var(--muted); background:var(--bg); }
`;

const DiffView: FC<{ files: FileDiff[] }> = ({ files }) => (
  <>
    {files.map((file) => (
      <div class="diff" data-diff-file={file.path}>
        <h4>
          {file.path} <span class="muted">({file.status})</span>
        </h4>
        <table>
          <tbody>
            {file.hunks.map((hunk, i) => (
              <>
                {i > 0 && (
                  <tr class="gap">
                    <td class="n">⋯</td>
                    <td class="n" />
                    <td />
                  </tr>
                )}
                {hunk.map((line) => (
                  <tr class={line.kind} data-line-kind={line.kind}>
                    <td class="n">{line.old ?? ""}</td>
                    <td class="n">{line.new ?? ""}</td>
                    <td>
                      {line.kind === "added" ? "+ " : line.kind === "removed" ? "- " : "  "}
                      {line.text}
                    </td>
                  </tr>
                ))}
              </>
            ))}
          </tbody>
        </table>
      </div>
    ))}
  </>
);

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

/** The candidate upload form, with the compiler's errors when the last upload did not compile. */
const CandidateUpload: FC<{ viewer: Viewer; query: PolicyChangesQuery; problems?: string[] | undefined }> = ({
  viewer,
  query,
  problems,
}) => {
  const uploadQuery = new URLSearchParams({ days: String(query.days) });
  if (query.tenant !== undefined) uploadQuery.set("tenant", query.tenant);
  return (
    <section data-upload>
      <h2>Try a candidate policy</h2>
      <form
        class="upload"
        method="post"
        action={`/console/policy/candidates?${uploadQuery}`}
        enctype="multipart/form-data"
      >
        <input type="hidden" name="csrf" value={viewer.csrf} />
        <label>
          A policy folder's .rego and data files, or one bundle (.tar.gz)
          <input type="file" name="files" multiple accept=".rego,.json,.yaml,.yml,.gz,.tgz" required />
        </label>
        <button type="submit">Upload and replay</button>
      </form>
      <p class="muted">
        It is compiled apart from the live policy, kept for a while for your tenant only, and never serves.
      </p>
      {problems && problems.length > 0 && (
        <div class="problems" data-problems>
          <strong>The candidate does not compile:</strong>
          <ul>
            {problems.map((p) => (
              <li>{p}</li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
};

/** Every archived revision, newest first, each with its replay link. */
const RevisionTable: FC<{ query: PolicyChangesQuery; changes: PolicyChanges }> = ({ query, changes }) => (
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
            <a href={`/console/policy?${new URLSearchParams({ candidate: r.id, days: String(query.days) })}`}>
              Replay against it
            </a>
          </td>
        </tr>
      ))}
    </tbody>
  </table>
);

/** What replaying the chosen revision or upload against recent decisions would change. */
const ReplaySection: FC<{ query: PolicyChangesQuery; replay: NonNullable<PolicyChanges["replay"]> }> = ({
  query,
  replay,
}) => (
  <section class="card" id="replay">
    <h2>
      {replay.uploaded ? "Uploaded candidate" : "Revision"} <code>{replay.candidate.id}</code> on the last{" "}
      {query.days} days
    </h2>
    {replay.uploaded && <p class="muted">{replay.candidate.origin}</p>}
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
        <h3>Decisions it would change{replay.summary.changed > SHOWN ? ` (the newest ${SHOWN})` : ""}</h3>
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
);

export const PolicyChangesPage: FC<{
  viewer: Viewer;
  query: PolicyChangesQuery;
  changes: PolicyChanges;
  /** Why an uploaded candidate was refused: the compiler's positioned errors. */
  problems?: string[] | undefined;
}> = ({ viewer, query, changes, problems }) => {
  const replay = changes.replay;
  return (
    <Layout title="Policy changes" viewer={viewer}>
      <style dangerouslySetInnerHTML={{ __html: style }} />
      <h1>Policy changes</h1>
      <p class="muted">
        Every policy revision Writ loaded, newest first. Replay one, or a policy you upload, against the
        decisions of the last {query.days} days in your tenant to see what it would change before it ships.
      </p>
      <CandidateUpload viewer={viewer} query={query} problems={problems} />
      <RevisionTable query={query} changes={changes} />
      {replay && <ReplaySection query={query} replay={replay} />}
      {changes.diff && (
        <section class="card" id="diff" data-diff>
          <h2>
            Sources: <code>{changes.diff.base}</code>
            {changes.diff.base === changes.live ? " (live)" : ""} → <code>{replay?.candidate.id}</code>
          </h2>
          {changes.diff.files.length === 0 ? (
            <p>The sources are the same.</p>
          ) : (
            <DiffView files={changes.diff.files} />
          )}
        </section>
      )}
    </Layout>
  );
};

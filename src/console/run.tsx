/**
 * A Code Mode run on a decision page: the run's own entry lists the calls its program made, in
 * order, each linked to its decision; a call's entry links back to its run. Everything shown is
 * what the log holds (entries whose input names the run, `input.context.run`).
 */
import type { FC } from "hono/jsx";
import type { DecisionLogEntry } from "../store/types.ts";
import { decisionHref } from "./decisions.tsx";
import { DecisionBadge } from "./layout.tsx";
import type { Viewer } from "./session.ts";

export interface RunView {
  id: string;
  /** The decision id of the run's own entry. */
  decision_id: string;
  /** Every entry of the run the viewer may see, oldest first (the run's own included). */
  entries: DecisionLogEntry[];
}

export const RunSection: FC<{ run: RunView; entry: DecisionLogEntry; viewer: Viewer }> = ({
  run,
  entry,
  viewer,
}) => {
  const own = run.entries.find((e) => e.decision_id === run.decision_id);
  const calls = run.entries.filter((e) => e.decision_id !== run.decision_id);
  const isRun = entry.decision_id === run.decision_id;
  return (
    <section data-run={run.id}>
      <h2>Code Mode run</h2>
      <p>
        {isRun ? (
          <>
            This decision let a program run (run <code>{run.id}</code>). Each call the program made was
            decided on its own:
          </>
        ) : (
          <>
            This call was made by a program in run <code>{run.id}</code>
            {own ? (
              <>
                {" "}
                (<a href={decisionHref(own, viewer)}>the run's decision</a>)
              </>
            ) : (
              ""
            )}
            . The run's calls:
          </>
        )}
      </p>
      {calls.length === 0 ? (
        <p class="muted">The program made no calls.</p>
      ) : (
        <table data-run-calls>
          <thead>
            <tr>
              <th>Seq</th>
              <th>Action</th>
              <th>Resource</th>
              <th>Decision</th>
              <th>Reasons</th>
            </tr>
          </thead>
          <tbody>
            {calls.map((e) => (
              <tr data-current={e.decision_id === entry.decision_id ? "true" : undefined}>
                <td>
                  <a href={decisionHref(e, viewer)}>{String(e.seq)}</a>
                </td>
                <td>
                  <code>{e.action ?? "(unknown)"}</code>
                </td>
                <td>{e.resource ? `${e.resource.type}/${e.resource.id}` : ""}</td>
                <td>
                  <DecisionBadge decision={e.decision} />
                </td>
                <td>{e.reasons.map((r) => r.code).join(", ")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
};

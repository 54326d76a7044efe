/**
 * A decision explained (issue 19): the rules that produced its result, each with the body
 * expressions that held on the way, their lines and the values bound (`policy/explain.ts`: the
 * archived revision, built instrumented), and what to keep in mind (a redacted input).
 */
import type { FC } from "hono/jsx";
import type { DecisionExplanation } from "../policy/explain.ts";
import { DecisionBadge, Layout } from "./layout.tsx";
import type { Viewer } from "./session.ts";

export const ExplainPage: FC<{ viewer: Viewer; explained: DecisionExplanation; back: string }> = ({
  viewer,
  explained: e,
  back,
}) => (
  <Layout title={`Why ${e.decision_id}`} viewer={viewer}>
    <h1>
      Why <DecisionBadge decision={e.decision} />
    </h1>
    <p>
      Decision <a href={back}>{e.decision_id}</a>, re-evaluated against policy revision{" "}
      <code>{e.revision}</code> ({e.path}), built instrumented:{" "}
      {e.same_result ? "the same result as logged." : "a different result than logged."}
    </p>
    {e.notes.map((note) => (
      <p class="warning" data-note>
        {note}
      </p>
    ))}
    <h2>Rules that produced values, in the order they did</h2>
    {e.explanation.rules.map((rule) => (
      <section class="card" data-rule={rule.rule} data-line={rule.line}>
        <h3>
          <code>
            {rule.file}:{rule.line}
          </code>{" "}
          {rule.default ? "default " : ""}
          {rule.rule}
        </h3>
        <pre>{rule.text}</pre>
        {rule.because.length > 0 && (
          <table>
            <thead>
              <tr>
                <th>Line</th>
                <th>Held</th>
                <th>Values</th>
              </tr>
            </thead>
            <tbody>
              {rule.because.map((step) => (
                <tr>
                  <td>{step.line}</td>
                  <td>
                    <code>{step.text}</code>
                  </td>
                  <td>
                    {Object.entries(step.bindings)
                      .map(([name, value]) => `${name} = ${JSON.stringify(value)}`)
                      .join(", ")}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    ))}
  </Layout>
);

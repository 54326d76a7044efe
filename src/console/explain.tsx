/**
 * A decision explained (issues 19, 31), answer first: the decision and the chain of rules that
 * produced it, then that chain as a tree of rules and the body expressions that held, each with
 * the values it saw (`policy/explain.ts`: the archived revision, built instrumented, values
 * redacted as the log redacts), then, folded, what was tried and did not hold and the rest.
 */
import type { FC } from "hono/jsx";
import { type DecisionExplanation, valueLine } from "../policy/explain.ts";
import type { ExplainNode } from "../rego/explain-tree.ts";
import { DecisionBadge, Layout } from "./layout.tsx";
import type { Viewer } from "./session.ts";

/** The page's own styles (the layout's sheet is shared by every page). */
const style = `
.why { font: 14px/1.5 ui-monospace, SFMono-Regular, Menlo, monospace; background:#fff; border:1px solid var(--line);
  border-left: 4px solid var(--accent); border-radius:6px; padding:.6rem .9rem; margin-bottom:1rem; }
.why div + div { margin-top:.3rem; }
.tree, .tree ul { list-style:none; margin:0; padding:0; }
.tree ul { margin:.3rem 0 .2rem 1.4rem; padding-left:.8rem; border-left:2px solid var(--line); }
.rule-head { display:flex; gap:.6rem; align-items:baseline; flex-wrap:wrap; }
.rule-head code { font-weight:600; }
.rule-head .where { color:var(--muted); font-size:.85rem; }
.rule.failed > .rule-head code { color: var(--muted); font-weight:500; }
.step { display:grid; grid-template-columns: 1.2rem 2.8rem 1fr; gap:0 .4rem; padding:.15rem 0; }
.step .mark.held { color: var(--allow); } .step .mark.failed { color: var(--deny); font-weight:700; }
.step .line { color: var(--muted); text-align:right; font: 13px/1.4 ui-monospace, monospace; }
.values { grid-column: 3; display:flex; flex-wrap:wrap; gap:.2rem .5rem; margin-top:.15rem; }
.values span { background: var(--bg); border:1px solid var(--line); border-radius:4px; padding:0 .35rem;
  font: 12.5px/1.5 ui-monospace, monospace; max-width: 100%; overflow-wrap:anywhere; }
.values b { font-weight:600; color: var(--cond); }
.step > ul { grid-column: 2 / 4; }
details > summary { cursor:pointer; font-weight:600; margin: .2rem 0 .5rem; }
`;

const ValueChips: FC<{ values: ExplainNode["steps"][number]["values"] }> = ({ values }) =>
  values.length === 0 ? null : (
    <div class="values">
      {values.map((v) => (
        <span data-value={v.term}>
          <b>{v.term}</b> = {valueLine(v.value, 240)}
        </span>
      ))}
    </div>
  );

const RuleNode: FC<{ node: ExplainNode }> = ({ node }) => (
  <li class={`rule ${node.held ? "held" : "failed"}`} data-rule={node.rule} data-line={node.line}>
    <div class="rule-head">
      <code>
        {node.default ? "default " : ""}
        {node.head}
      </code>
      <span class="where">
        {node.file}:{node.line}
        {node.held ? "" : " · did not hold"}
      </span>
    </div>
    <ul>
      {node.steps.map((step) => (
        <li class="step" data-step-line={step.line} data-held={String(step.held)}>
          <span class={`mark ${step.held ? "held" : "failed"}`} title={step.held ? "held" : "did not hold"}>
            {step.held ? "✓" : "✗"}
          </span>
          <span class="line">{step.line}</span>
          <code>{step.text}</code>
          <ValueChips values={step.values} />
          {step.because.length > 0 && (
            <ul>
              {step.because.map((child) => (
                <RuleNode node={child} />
              ))}
            </ul>
          )}
        </li>
      ))}
    </ul>
  </li>
);

export const ExplainPage: FC<{ viewer: Viewer; explained: DecisionExplanation; back: string }> = ({
  viewer,
  explained: e,
  back,
}) => {
  const { tree } = e.explanation;
  return (
    <Layout title={`Why ${e.decision_id}`} viewer={viewer}>
      <style dangerouslySetInnerHTML={{ __html: style }} />
      <h1>
        Why <DecisionBadge decision={e.decision} />
      </h1>
      <p class="muted">
        Decision <a href={back}>{e.decision_id}</a>, re-evaluated against policy revision{" "}
        <code>{e.revision}</code> ({e.path}):{" "}
        {e.same_result ? "the same result as logged." : "a different result than logged."}
      </p>
      {e.notes.map((note) => (
        <p class="warning" data-note>
          {note}
        </p>
      ))}
      <div class="why" data-summary>
        {tree.decided_by === "undefined" ? (
          <div>no rule of {e.path} produced a value</div>
        ) : (
          e.summary.map((chain) => <div>{chain}</div>)
        )}
      </div>
      {tree.answer && (
        <section data-answer>
          <h2>{tree.decided_by === "default" ? "Decided by the default rule" : "The rule that decided"}</h2>
          <ul class="tree">
            <RuleNode node={tree.answer} />
          </ul>
        </section>
      )}
      {tree.tried.length > 0 && (
        <section data-tried>
          <details open={tree.decided_by === "default" || e.decision !== "deny"}>
            <summary>
              {tree.decided_by === "default"
                ? `Rules tried that did not hold, so the default applied (${tree.tried.length})`
                : `Tried first, did not hold (${tree.tried.length})`}
            </summary>
            <ul class="tree">
              {tree.tried.map((node) => (
                <RuleNode node={node} />
              ))}
            </ul>
          </details>
        </section>
      )}
      {tree.rest.length > 0 && (
        <section data-rest>
          <details>
            <summary>Other rules that produced values ({tree.rest.length})</summary>
            <ul class="tree">
              {tree.rest.map((node) => (
                <RuleNode node={node} />
              ))}
            </ul>
          </details>
        </section>
      )}
    </Layout>
  );
};

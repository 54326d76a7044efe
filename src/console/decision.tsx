/**
 * One decision, explained: who asked for what, what the policy answered and why, which policy and
 * resource revisions it saw, the grant or approval it led to, what the log does not show (erased
 * and masked input), timings, and whether the entry verifies in the hash chain. Everything shown
 * is what the log entry holds.
 */
import type { FC } from "hono/jsx";
import type { ChainStatus } from "../decisionlog/index.ts";
import { loggedResourceRevision } from "../decisionlog/query.ts";
import type { DecisionLogEntry } from "../store/types.ts";
import { EntryChain } from "./chain.tsx";
import { DecisionBadge, Layout } from "./layout.tsx";
import { RunSection, type RunView } from "./run.tsx";
import type { Viewer } from "./session.ts";

const outcomeSentences: Record<DecisionLogEntry["decision"], string> = {
  allow: "allowed the call: a grant was issued for exactly this call",
  allow_with_conditions: "allowed the call with conditions the executor must enforce",
  require_approval: "asked for an approval before the call may run",
  deny: "denied the call: nothing ran",
  error: "did not decide: the call failed before or instead of a decision",
};

function Pointers({ pointers, none }: { pointers: string[]; none: string }) {
  if (pointers.length === 0) return <span class="muted">{none}</span>;
  return (
    <span>
      {pointers.map((p, i) => (
        <>
          {i > 0 && ", "}
          <code>{p}</code>
        </>
      ))}
    </span>
  );
}

function millis(ns: number): string {
  return `${(ns / 1e6).toFixed(3)} ms`;
}

/** Who asked for what, what the policy answered, and the ids that link the entry to the rest. */
const DecisionSummary: FC<{ e: DecisionLogEntry }> = ({ e }) => (
  <section>
    <p data-summary>
      <strong>{e.subject ?? "An unauthenticated caller"}</strong>
      {e.tenant ? ` (tenant ${e.tenant})` : ""} asked for <strong>{e.action ?? "an unknown action"}</strong>
      {e.resource ? ` on ${e.resource.type}/${e.resource.id}` : ""}. The policy <code>{e.path}</code> at
      revision <code>{e.bundles.writ.revision}</code> {outcomeSentences[e.decision]}
      {e.error ? ` (${e.error})` : ""}.
    </p>
    <dl>
      <dt>Decision id</dt>
      <dd>
        <code>{e.decision_id}</code>
      </dd>
      <dt>Time</dt>
      <dd>{e.timestamp}</dd>
      <dt>Policy</dt>
      <dd>
        <code>{e.path}</code> revision <code data-policy-revision>{e.bundles.writ.revision}</code>
      </dd>
      <dt>Resource</dt>
      <dd>
        {e.resource ? `${e.resource.type}/${e.resource.id}` : "none"}
        {loggedResourceRevision(e) === undefined ? "" : ` revision ${loggedResourceRevision(e)}`}
      </dd>
      <dt>Grant</dt>
      <dd>{e.grant_jti ? <code>{e.grant_jti}</code> : <span class="muted">none issued</span>}</dd>
      <dt>Approval</dt>
      <dd>{e.approval_id ? <code>{e.approval_id}</code> : <span class="muted">none</span>}</dd>
      <dt>Request</dt>
      <dd>
        <code>{e.request_id}</code>
        {e.caller_request_id !== undefined && (
          <span class="muted">
            {" "}
            (the caller's <code>{e.caller_request_id}</code>)
          </span>
        )}
      </dd>
    </dl>
  </section>
);

/** The policy's reasons (and whether the model saw each), the explanation's link, the conditions. */
const DecisionReasons: FC<{ e: DecisionLogEntry; viewer: Viewer }> = ({ e, viewer }) => (
  <section>
    <h2>Why: the reasons</h2>
    <p>
      <a href={explainHref(e, viewer)} data-explain>
        Explain: the rules and lines that produced this result
      </a>
    </p>
    {e.reasons.length === 0 ? (
      <p class="muted">The policy gave no reasons.</p>
    ) : (
      <table>
        <thead>
          <tr>
            <th>Code</th>
            <th>Message</th>
            <th>Shown to the model</th>
          </tr>
        </thead>
        <tbody>
          {e.reasons.map((r) => (
            <tr>
              <td>
                <code>{r.code}</code>
              </td>
              <td>{r.message}</td>
              <td>{r.visible_to_model ? "yes" : "no (withheld)"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
    {e.conditions.length > 0 && (
      <>
        <h2>Conditions</h2>
        <pre>{JSON.stringify(e.conditions, null, 2)}</pre>
      </>
    )}
  </section>
);

/** What redaction erased or masked from the stored input. */
const DecisionRedactions: FC<{ e: DecisionLogEntry }> = ({ e }) => (
  <section>
    <h2>What the log does not show</h2>
    <dl>
      <dt>Erased (removed)</dt>
      <dd>
        <Pointers pointers={e.erased} none="nothing" />
      </dd>
      <dt>Masked</dt>
      <dd>
        <Pointers pointers={e.masked} none="nothing" />
      </dd>
    </dl>
    <p class="muted">Pointers are JSON Pointers into the policy input below, which is stored redacted.</p>
  </section>
);

const DecisionTimings: FC<{ e: DecisionLogEntry }> = ({ e }) => (
  <section>
    <h2>Timings</h2>
    {Object.keys(e.metrics).length === 0 ? (
      <p class="muted">None recorded.</p>
    ) : (
      <dl>
        {Object.entries(e.metrics).map(([name, value]) => (
          <>
            <dt>
              <code>{name}</code>
            </dt>
            <dd>{name.endsWith("_ns") ? millis(value) : String(value)}</dd>
          </>
        ))}
      </dl>
    )}
  </section>
);

/** The stored (redacted) policy input and result, and the entry's place on the hash chain. */
const DecisionStored: FC<{ e: DecisionLogEntry }> = ({ e }) => (
  <section>
    <h2>Policy input (as stored, redacted)</h2>
    <pre>{JSON.stringify(e.input ?? null, null, 2)}</pre>
    <h2>Policy result</h2>
    {e.result === undefined ? (
      <p class="muted">No policy ran.</p>
    ) : (
      <pre>{JSON.stringify(e.result, null, 2)}</pre>
    )}
    <h2>Hash chain</h2>
    <dl>
      <dt>Previous hash</dt>
      <dd>
        <code>{e.prev_hash}</code>
      </dd>
      <dt>Hash</dt>
      <dd>
        <code>{e.hash}</code>
      </dd>
    </dl>
  </section>
);

export const DecisionPage: FC<{
  viewer: Viewer;
  entry: DecisionLogEntry;
  chain: ChainStatus;
  /** The Code Mode run the entry belongs to, with its entries. */
  run?: RunView | undefined;
}> = ({ viewer, entry: e, chain, run }) => (
  <Layout title={`Decision ${e.seq}`} viewer={viewer}>
    <p>
      <a href="/console/decisions">« Decisions</a>
    </p>
    <h1>
      Decision {String(e.seq)} <DecisionBadge decision={e.decision} />
    </h1>
    <EntryChain result={chain.result} seq={e.seq} />
    <DecisionSummary e={e} />
    {run && <RunSection run={run} entry={e} viewer={viewer} />}
    <DecisionReasons e={e} viewer={viewer} />
    <DecisionRedactions e={e} />
    <DecisionTimings e={e} />
    <DecisionStored e={e} />
  </Layout>
);

/** The entry's explanation (with its tenant when it is another one's, as the list links it). */
function explainHref(e: DecisionLogEntry, viewer: Viewer): string {
  const path = `/console/decisions/${encodeURIComponent(e.decision_id)}/explain`;
  return e.tenant === viewer.subject.tenant
    ? path
    : `${path}?${new URLSearchParams({ tenant: e.tenant ?? "*" })}`;
}

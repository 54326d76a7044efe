/** The decision list: the filters of `writ logs query`, cursor paging, charts and the chain status. */
import type { FC } from "hono/jsx";
import { z } from "zod";
import type { ChainStatus, VerifyResult } from "../decisionlog/index.ts";
import {
  type DecisionFilterFields,
  decisionFilterFieldsSchema,
  decisionOutcomes,
} from "../decisionlog/query.ts";
import type { DecisionLogEntry } from "../store/types.ts";
import { ChainBanner, entryChainState } from "./chain.tsx";
import { OutcomesOverTime, TopDeniedActions } from "./charts.tsx";
import { DecisionBadge, Layout } from "./layout.tsx";
import type { Viewer } from "./session.ts";

const DEFAULT_PAGE_SIZE = 50;

export const decisionListQuerySchema = decisionFilterFieldsSchema
  .extend({
    cursor: z
      .string()
      .max(100)
      .optional()
      .transform((c) => (c === "" ? undefined : c)),
    limit: z.coerce.number().int().min(1).max(200).default(DEFAULT_PAGE_SIZE),
  })
  .strict();

export type DecisionListQuery = z.output<typeof decisionListQuerySchema>;

const filterFields = [
  ["subject", "Subject"],
  ["tenant", "Tenant"],
  ["action", "Action"],
  ["reason", "Reason code"],
  ["resource_type", "Resource type"],
  ["resource_id", "Resource id"],
  ["path", "Path (writ/shadow: disagreements)"],
  ["run", "Code Mode run"],
  ["since", "Since (ISO 8601)"],
  ["until", "Until"],
] as const;

/** The filter fields that are set, as a query string (for paging links). */
export function filterQueryString(fields: DecisionFilterFields, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (typeof value === "string") params.set(name, value);
  for (const [name, value] of Object.entries(extra)) params.set(name, value);
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

const FilterForm: FC<{ query: DecisionListQuery }> = ({ query }) => (
  <form class="filters" method="get" action="/console/decisions">
    {filterFields.map(([name, label]) => (
      <label>
        {label}
        <input name={name} value={query[name] ?? ""} size={14} />
      </label>
    ))}
    <label>
      Decision
      <select name="decision">
        <option value="">any</option>
        {decisionOutcomes.map((d) => (
          <option value={d} selected={query.decision === d}>
            {d}
          </option>
        ))}
      </select>
    </label>
    <button type="submit">Filter</button>
    <a href="/console/decisions">Clear</a>
  </form>
);

function ChainMark({ chain, seq }: { chain: VerifyResult; seq: number }) {
  const state = entryChainState(chain, seq);
  if (state === "verified") return null;
  return (
    <strong title="fails hash-chain verification">{state === "broken" ? " ⚠ broken" : " ⚠ untrusted"}</strong>
  );
}

/** An entry's page; outside the viewer's tenant (platform roles only) it names the entry's tenant. */
export function decisionHref(e: DecisionLogEntry, viewer: Viewer): string {
  const path = `/console/decisions/${encodeURIComponent(e.decision_id)}`;
  return e.tenant === viewer.subject.tenant
    ? path
    : `${path}?${new URLSearchParams({ tenant: e.tenant ?? "*" })}`;
}

const DecisionRows: FC<{ entries: DecisionLogEntry[]; chain: VerifyResult; viewer: Viewer }> = ({
  entries,
  chain,
  viewer,
}) => (
  <table>
    <thead>
      <tr>
        <th>Seq</th>
        <th>Time</th>
        <th>Decision</th>
        <th>Subject</th>
        <th>Action</th>
        <th>Resource</th>
        <th>Reasons</th>
      </tr>
    </thead>
    <tbody>
      {entries.map((e) => (
        <tr
          class={entryChainState(chain, e.seq) === "verified" ? "" : "broken"}
          data-decision-id={e.decision_id}
        >
          <td>
            <a href={decisionHref(e, viewer)}>{String(e.seq)}</a>
            <ChainMark chain={chain} seq={e.seq} />
          </td>
          <td>{e.timestamp.replace("T", " ").replace("Z", "")}</td>
          <td>
            <DecisionBadge decision={e.decision} />
          </td>
          <td>
            {e.subject ?? "—"} <span class="muted">{e.tenant ?? ""}</span>
          </td>
          <td>{e.action ?? "—"}</td>
          <td>{e.resource ? `${e.resource.type}/${e.resource.id}` : "—"}</td>
          <td>{e.reasons.map((r) => r.code).join(", ") || (e.error ?? "—")}</td>
        </tr>
      ))}
    </tbody>
  </table>
);

export interface DecisionListProps {
  viewer: Viewer;
  query: DecisionListQuery;
  entries: DecisionLogEntry[];
  nextCursor: string | undefined;
  chain: ChainStatus;
  /** The most recent matching decisions the charts are drawn from. */
  sample: DecisionLogEntry[];
}

export const DecisionListPage: FC<DecisionListProps> = ({
  viewer,
  query,
  entries,
  nextCursor,
  chain,
  sample,
}) => {
  const { cursor: _cursor, limit, ...fields } = query;
  // Paging links keep the filters and a page size other than the default.
  const size: Record<string, string> = limit === DEFAULT_PAGE_SIZE ? {} : { limit: String(limit) };
  return (
    <Layout title="Decisions" viewer={viewer}>
      <h1>Decisions</h1>
      <ChainBanner status={chain} />
      <section>
        <FilterForm query={query} />
      </section>
      {sample.length > 0 && (
        <div class="charts">
          <section>
            <h2>Decisions per outcome over time</h2>
            <OutcomesOverTime entries={sample} />
          </section>
          <section>
            <h2>Most denied actions</h2>
            <TopDeniedActions entries={sample} />
          </section>
        </div>
      )}
      {sample.length > 0 && (
        <p class="muted">Charts: the {sample.length} most recent decisions matching the filters.</p>
      )}
      <section>
        {entries.length === 0 ? (
          <p>No decisions match these filters.</p>
        ) : (
          <DecisionRows entries={entries} chain={chain.result} viewer={viewer} />
        )}
        <div class="pager">
          {query.cursor !== undefined && (
            <a href={`/console/decisions${filterQueryString(fields, size)}`}>« Newest</a>
          )}
          {nextCursor !== undefined && (
            <a
              rel="next"
              href={`/console/decisions${filterQueryString(fields, { ...size, cursor: nextCursor })}`}
            >
              Older »
            </a>
          )}
        </div>
      </section>
    </Layout>
  );
};

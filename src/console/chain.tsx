/** The hash chain's verification status, for the whole log and for one entry. */
import type { FC } from "hono/jsx";
import type { ChainStatus, VerifyResult } from "../decisionlog/index.ts";

export type EntryChainState = "verified" | "broken" | "after_break";

/** Where an entry stands: before the first break it verifies; at it, broken; after it, untrusted. */
export function entryChainState(result: VerifyResult, seq: number): EntryChainState {
  if (result.ok || seq < result.first_broken.seq) return "verified";
  return seq === result.first_broken.seq ? "broken" : "after_break";
}

const reasons = {
  hash_mismatch: "its content no longer matches its hash: it was edited after it was written",
  broken_link: "it does not link to the previous entry's hash: entries were removed, inserted or reordered",
  missing_entries: "entries are missing: they were deleted",
  unreadable: "the stored row does not parse: it was changed outside Writ",
} as const;

/** When the whole log was last walked, for the banner. */
const FullCheck: FC<{ at: string }> = ({ at }) => (
  <span class="muted">
    {" "}
    (whole chain walked at {at.replace("T", " ").slice(0, 19)} UTC; entries since then, and every entry shown,
    checked now)
  </span>
);

export const ChainBanner: FC<{ status: ChainStatus }> = ({ status: { result, full_checked_at } }) =>
  result.ok ? (
    <div class="chain ok" data-chain="intact">
      Hash chain intact: all {result.entries} entries verify.
      <FullCheck at={full_checked_at} />
    </div>
  ) : (
    <div class="chain broken" data-chain="broken">
      Hash chain BROKEN at entry {result.first_broken.seq}
      {result.first_broken.decision_id === null ? "" : ` (decision ${result.first_broken.decision_id})`}:{" "}
      {reasons[result.first_broken.reason]}. Entries from there on cannot be trusted; restore the store from a
      backup and compare (writ logs export).
    </div>
  );

export const EntryChain: FC<{ result: VerifyResult; seq: number }> = ({ result, seq }) => {
  const state = entryChainState(result, seq);
  if (state === "verified") {
    return (
      <div class="chain ok" data-chain="verified">
        This entry verifies: its hash matches its content and links to every entry before it.
      </div>
    );
  }
  return (
    <div class="chain broken" data-chain={state}>
      {state === "broken"
        ? `This entry is BROKEN: ${result.ok ? "" : reasons[result.first_broken.reason]}. What it shows cannot be trusted.`
        : `This entry comes after the break at entry ${result.ok ? "" : result.first_broken.seq}: it cannot be trusted.`}
    </div>
  );
};

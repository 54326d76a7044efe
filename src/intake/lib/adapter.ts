/** What every provider adapter provides to `parseProposal`. */
import type { ProposalFormat, ProposedCall } from "../../core/types.ts";
import type { Problems } from "./problems.ts";

export type ConcreteFormat = Exclude<ProposalFormat, "auto">;

export interface ProposalAdapter {
  format: ConcreteFormat;
  /** The payload shapes this adapter reads, for error messages ("a chat completion, …"). */
  shapes: string;
  /** How to produce a valid payload of this format, for `suggestedFix`. */
  fix: string;
  /** The calls in `payload`, in payload order; problems are recorded, not thrown. */
  read(payload: unknown, problems: Problems): ProposedCall[];
}

/** True for a JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

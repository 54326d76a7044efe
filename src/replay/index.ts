/**
 * Replaying logged decisions against a candidate policy (issue 19): `writ policy replay` and,
 * later, the console's "Policy changes" page use the same iterator and summary.
 */

export { loadCandidate } from "./candidate.ts";
export {
  ARROW,
  candidateAnswer,
  loggedAnswer,
  Replay,
  type ReplayAnswer,
  type ReplayedDecision,
  type ReplayOptions,
  type ReplayResult,
  type ReplaySummary,
  type UnreplayableDecision,
} from "./replay.ts";

/** Proposal intake (DESIGN section 1, stage 1): provider payloads in, `ProposedCall`s out. */
export type { ConcreteFormat } from "./lib/adapter.ts";
export {
  findKeyProblems,
  KEY_PROBLEM_FIX,
  type KeyProblem,
  keyFieldErrors,
  parseStrictJson,
  type StrictJson,
} from "./lib/strict-json.ts";
export { type ParsedProposal, parseProposal } from "./parse-proposal.ts";

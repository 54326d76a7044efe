/**
 * The hash chain of the decision log: SHA-256 (hex) of the RFC 8785 canonical JSON of an entry
 * without its `hash` (src/store/chain.ts computes it as entries are appended; `verify` and the
 * monitor recompute it here).
 */
export { entryHash as hashEntry } from "../store/chain.ts";

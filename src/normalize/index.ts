/** Normalization (DESIGN section 1, stage 2): a proposed call becomes a canonical action. */
export { formatPointer, type PointerLookup, parsePointer, resolvePointer } from "./json-pointer.ts";
export {
  type GoverningResource,
  isTool,
  promptContract,
  resourceContract,
  resourceMatch,
} from "./mcp.ts";
export {
  canonicalAction,
  type NormalizedCall,
  normalize,
  normalizedArgsDigest,
  UnknownToolError,
} from "./normalize.ts";

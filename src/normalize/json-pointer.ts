/** JSON Pointers live in src/core (conditions, the executor and normalization share them). */
export {
  atPointer,
  formatPointer,
  type PointerLookup,
  parsePointer,
  resolvePointer,
} from "../core/json-pointer.ts";

/**
 * OPA bundles for the Wasm target (`opa build -t wasm` layout): write them from a compiled
 * module, read them whoever built them.
 */
export {
  type Bundle,
  type BundleInput,
  createBundle,
  type ReadBundleOptions,
  readBundle,
  WASM_FILE,
  writeBundle,
} from "./bundle.ts";
export { type DataObject, dataPathOf, insertData, isDataFile, isDataObject, parseDataText } from "./data.ts";
export { BundleError } from "./error.ts";
export { type BundleManifest, manifestSchema, type WasmResolver } from "./manifest.ts";

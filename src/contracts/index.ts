/** Tool contracts (DESIGN section 3): config schema, registry, model-facing views. */
export { contractsJsonSchema } from "./editor-schema.ts";
export type { SchemaViolation } from "./json-schema.ts";
export {
  CompiledContractRegistry,
  type ContractRegistry,
  contractKey,
  defaultModelName,
  modelFamilyOf,
  parseToolContracts,
} from "./registry.ts";
export {
  type ModelFacingTool,
  type ModelFamily,
  type ModelView,
  modelFamilies,
  type ObjectJsonSchema,
  type ToolBackend,
  type ToolContract,
  type ToolContractInput,
  toolContractSchema,
  toolContractsSchema,
} from "./schema.ts";

/**
 * A tool the sample policy governs no action of, so discovery hides it from every caller: a
 * gateway configured with it shows whether anything (an unknown tool's suggestions) names it.
 */
export const HIDDEN_TOOL = {
  name: "vault.export",
  version: "1",
  description: "Export every secret of the vault.",
  side_effect: "none",
  idempotency: "natural",
  data_classification: "secret",
  input_schema: { type: "object", additionalProperties: false, properties: {} },
  backend: { kind: "inprocess", handler: "repo.finish" },
  model_views: [{ family: "default", name: "vault_export" }],
};

/** The hidden tool's names (canonical and model-facing) in any text. */
export const HIDDEN_TOOL_NAMES = /vault[._]export/;

/**
 * Tool contracts (DESIGN section 3) as they are declared in the `tools:` section of the gateway
 * config: one per tool and version. The model-facing views are separate from the canonical
 * contract, so one contract can be shown differently to each model family.
 */
import { z } from "zod";

/** RFC 6901 JSON Pointer to a value inside the arguments: `/path`, `/a~1b` (key `a/b`), `/a~0b` (key `a~b`). */
export const argumentPointerSchema = z
  .string()
  .regex(/^(\/([^~/]|~[01])*)+$/, {
    error: 'must be a JSON Pointer into the arguments such as "/path" (escape "~" as "~0" and "/" as "~1")',
  })
  .describe("RFC 6901 JSON Pointer into the call arguments, e.g. /repo");

/** Model-facing tool names: what OpenAI and Anthropic accept for a function or tool name. */
export const modelFacingNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

/** Canonical names: dotted segments (`repo.read`) whose underscored form is a valid model-facing name. */
export const canonicalNamePattern = /^[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*$/;

export const modelFamilies = ["default", "openai", "anthropic", "mcp"] as const;
export type ModelFamily = (typeof modelFamilies)[number];

/** A JSON Schema for the arguments: an object schema, as every provider requires for tool input. */
export const objectJsonSchema = z
  .looseObject({ type: z.literal("object") })
  .describe(
    'JSON Schema (draft 2020-12) of an object, e.g. {type: "object", properties: {…}, required: […]}',
  );

export const modelViewSchema = z
  .strictObject({
    family: z
      .enum(modelFamilies)
      .describe("The model family this view is shown to; default applies to all others"),
    name: z
      .string()
      .regex(modelFacingNamePattern, {
        error: "must be 1 to 64 letters, digits, underscores or hyphens (what OpenAI and Anthropic accept)",
      })
      .describe("Tool name the model sees and calls"),
    description: z
      .string()
      .min(1)
      .optional()
      .describe("Description the model sees (default: the contract's)"),
    input_schema: objectJsonSchema
      .optional()
      .describe(
        "Argument schema the model sees (default: the contract's); arguments are always checked against the contract's",
      ),
  })
  .describe("How the tool is presented to one model family");

const headerNameSchema = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { error: "must be an HTTP header name" })
  .refine((name) => !["authorization", "proxy-authorization", "cookie"].includes(name.toLowerCase()), {
    error: "credentials do not belong in headers; name them with credentials_ref",
  });

const mcpServerName = z.string().min(1).describe("Name of a configured MCP server");

export const backendSchema = z
  .discriminatedUnion("kind", [
    z
      .strictObject({
        kind: z.literal("inprocess"),
        handler: z.string().min(1).describe("Name of the handler registered in the Writ process"),
      })
      .describe("A handler running inside the Writ process"),
    z
      .strictObject({
        kind: z.literal("http"),
        method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]),
        url: z.url({ protocol: /^https?$/, error: "must be an http or https URL" }),
        headers: z
          .record(headerNameSchema, z.string())
          .optional()
          .describe("Static, non-secret request headers"),
        credentials_ref: z
          .string()
          .min(1)
          .optional()
          .describe("Name of the credentials Writ attaches at dispatch (never shown to the model or caller)"),
      })
      .describe("An HTTP service"),
    z
      .strictObject({
        kind: z.literal("mcp"),
        server: mcpServerName,
        tool: z.string().min(1).describe("Tool name on that server"),
      })
      .describe("A tool on an MCP server"),
    z
      .strictObject({
        kind: z.literal("mcp_resource"),
        server: mcpServerName,
        uri: z
          .string()
          .min(1)
          .describe(
            "The resource URI this contract governs, exact (test://static-text) or an RFC 6570 template (test://template/{id}/data); a read's arguments are {uri, ...the template's variables}",
          ),
      })
      .describe("Reads (resources/read) of the resources on an MCP server whose URI this contract matches"),
    z
      .strictObject({
        kind: z.literal("mcp_prompt"),
        server: mcpServerName,
        prompt: z.string().min(1).describe("Prompt name on that server; a call's arguments are the prompt's"),
      })
      .describe("A prompt on an MCP server (prompts/get)"),
  ])
  .describe("Where the tool runs when Writ dispatches it");

export const toolContractSchema = z
  .strictObject({
    name: z
      .string()
      .max(64)
      .regex(canonicalNamePattern, {
        error: 'must be dotted segments of letters, digits, "_" or "-", e.g. repo.read',
      })
      .describe("Canonical tool name, e.g. repo.read"),
    version: z.string().min(1).describe("Contract version, e.g. 1 or 2024-06-01"),
    description: z.string().min(1).describe("What the tool does"),
    input_schema: objectJsonSchema.describe("JSON Schema (draft 2020-12) the arguments must match"),
    output_schema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("JSON Schema (draft 2020-12) results are checked against"),
    side_effect: z.enum(["none", "reversible", "committing"]).describe("What a call changes"),
    idempotency: z.enum(["natural", "keyed", "none"]).describe("Whether repeating a call is safe"),
    resource: z
      .strictObject({
        type: z.string().min(1).describe("Resource type, e.g. repo"),
        id: argumentPointerSchema.describe("JSON Pointer to the resource id in the arguments, e.g. /repo"),
        revision: argumentPointerSchema
          .optional()
          .describe("JSON Pointer to the revision the call expects, for compare-and-swap"),
      })
      .optional()
      .describe("The resource a call touches"),
    data_classification: z
      .string()
      .min(1)
      .default("internal")
      .describe("Classification of the data the tool handles"),
    timeout_ms: z.number().int().positive().default(10_000).describe("Dispatch timeout in milliseconds"),
    retry: z
      .strictObject({
        attempts: z.number().int().min(1).max(10).describe("Total attempts, the first included"),
        backoff_ms: z.number().int().nonnegative().describe("Delay before each retry in milliseconds"),
      })
      .optional()
      .describe("Retries on transient failures (only for idempotent tools)"),
    concurrency_group: z.string().min(1).optional().describe("Calls in one group run one at a time"),
    backend: backendSchema,
    model_views: z
      .array(modelViewSchema)
      .default([])
      .describe(
        "Model-facing views; without a default view the name is the canonical name with dots as underscores",
      ),
  })
  .superRefine((contract, context) => {
    const kind = contract.backend.kind;
    if ((kind === "mcp_resource" || kind === "mcp_prompt") && contract.side_effect !== "none") {
      context.addIssue({
        code: "custom",
        path: ["side_effect"],
        message: `a ${kind} backend only reads (resources/read, prompts/get): set side_effect to "none"`,
      });
    }
    if ((kind === "mcp_resource" || kind === "mcp_prompt") && contract.output_schema !== undefined) {
      context.addIssue({
        code: "custom",
        path: ["output_schema"],
        message: `a ${kind} backend answers contents or messages, not structured content: remove output_schema`,
      });
    }
    if (contract.retry !== undefined && contract.idempotency === "none") {
      context.addIssue({
        code: "custom",
        path: ["retry"],
        message: 'retries need an idempotent tool: set idempotency to "natural" or "keyed", or remove retry',
      });
    }
    const families = new Set<ModelFamily>();
    for (const [index, view] of contract.model_views.entries()) {
      if (families.has(view.family)) {
        context.addIssue({
          code: "custom",
          path: ["model_views", index, "family"],
          message: `a second view for the ${view.family} family; keep one view per family`,
        });
      }
      families.add(view.family);
    }
  })
  .describe("A tool contract: one tool at one version");

export const toolContractsSchema = z
  .array(toolContractSchema)
  .describe("The tools Writ authorizes and dispatches");

export type ToolContract = z.output<typeof toolContractSchema>;
/** A contract as written in the config, before defaults are applied. */
export type ToolContractInput = z.input<typeof toolContractSchema>;
export type ModelView = z.output<typeof modelViewSchema>;
export type ToolBackend = z.output<typeof backendSchema>;
export type ObjectJsonSchema = z.output<typeof objectJsonSchema>;

/** What a model of one family is shown for one contract. */
export interface ModelFacingTool {
  name: string;
  description: string;
  input_schema: ObjectJsonSchema;
}

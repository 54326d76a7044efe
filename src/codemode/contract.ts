/**
 * `code.run`, the built-in contract that governs Code Mode itself. It is not in the `tools:`
 * registry (no model calls it by name, no backend runs it): a run is decided by the policy with
 * this action before its program starts, and discovery asks the policy about it to decide whether
 * `run_code` is offered. The policy sees the program's digest and size, never its text, so the
 * decision log holds no program (which could carry anything the model wrote).
 */
import { toolContractSchema } from "../contracts/schema.ts";
import { jsonDigest, sha256Hex } from "../core/digest.ts";
import type { CanonicalAction } from "../core/types.ts";
import { canonicalAction } from "../normalize/index.ts";

export const CODE_RUN_ACTION = "code.run";

/** The model-facing name of Code Mode's entrance (the MCP tool). */
export const RUN_CODE_TOOL = "run_code";

export const codeRunContract = toolContractSchema.parse({
  name: CODE_RUN_ACTION,
  version: "1",
  description:
    "Run a program that calls tools; each call it makes is decided on its own, so the run itself changes nothing.",
  side_effect: "none",
  idempotency: "none",
  input_schema: {
    type: "object",
    additionalProperties: false,
    required: ["code_sha256", "code_bytes"],
    properties: {
      code_sha256: { type: "string", pattern: "^[0-9a-f]{64}$" },
      code_bytes: { type: "integer", minimum: 0 },
    },
  },
  backend: { kind: "inprocess", handler: CODE_RUN_ACTION },
});

/** The action the policy decides for running `code`: its SHA-256 and size in bytes. */
export function codeRunAction(code: string): CanonicalAction {
  const args = { code_sha256: sha256Hex(code), code_bytes: Buffer.byteLength(code, "utf8") };
  return canonicalAction(codeRunContract, args, jsonDigest(args));
}

/**
 * Result handling (DESIGN sections 1.9 and 7): the backend's output is validated against the
 * contract's `output_schema` (an invalid output is never returned), redacted by the contract's
 * data classification, the grant's `redact_result` conditions and the secret detectors, and
 * shaped as the layered result.
 */
import { resultRedactions } from "../conditions/index.ts";
import type { ContractRegistry, ToolContract } from "../contracts/index.ts";
import { WritError } from "../core/errors.ts";
import type { Condition } from "../core/types.ts";
import { isSensitiveKey, MASK, scrubString } from "../decisionlog/detectors.ts";

export interface LayeredResult {
  summary: string;
  structured_content: Record<string, unknown>;
  artifact_refs: string[];
  provenance: {
    tool: string;
    version: string;
    target: string;
    time: string;
    resource_revision: string | null;
  };
  execution_meta: { latency_ms: number; attempt: number; request_id: string; effect: string };
  /** JSON Pointers (into structured_content) or `classification:<name>` removed; absent when none. */
  redacted?: string[];
}

export interface BackendOutput {
  summary: string;
  structured_content: Record<string, unknown>;
  artifact_refs?: string[];
  target?: string;
  resource_revision?: number | string;
}

export interface ResultContext {
  contracts: ContractRegistry;
  contract: ToolContract;
  conditions: readonly Condition[];
  target: string;
  resourceRevision: number | string | undefined;
  latencyMs: number;
  requestId: string;
}

/** Classifications whose content never leaves Writ. */
const WITHHELD_CLASSIFICATIONS = new Set(["secret"]);

/** Whether the effect happened once the handler returned (for errors after the handler ran). */
export function effectAfterRun(contract: ToolContract): boolean {
  return contract.side_effect !== "none";
}

function unescapeToken(token: string): string {
  return token.replaceAll("~1", "/").replaceAll("~0", "~");
}

/** Removes the value at `pointer`; true when something was removed. */
function removeAt(document: Record<string, unknown>, pointer: string): boolean {
  if (!pointer.startsWith("/")) return false;
  const tokens = pointer.split("/").slice(1).map(unescapeToken);
  let current: unknown = document;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(current)) current = current[Number(token)];
    else if (typeof current === "object" && current !== null && Object.hasOwn(current, token))
      current = Reflect.get(current, token);
    else return false;
  }
  const last = tokens.at(-1) ?? "";
  if (Array.isArray(current)) {
    if (!/^(0|[1-9][0-9]*)$/.test(last) || Number(last) >= current.length) return false;
    current.splice(Number(last), 1);
    return true;
  }
  if (typeof current === "object" && current !== null && Object.hasOwn(current, last)) {
    Reflect.deleteProperty(current, last);
    return true;
  }
  return false;
}

/** Every string scrubbed by the secret detectors; values under secret-named keys masked. */
export function maskSecrets(value: unknown): unknown {
  if (typeof value === "string") return scrubString(value);
  if (Array.isArray(value)) return value.map(maskSecrets);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        isSensitiveKey(k) && v !== null && v !== "" ? MASK : maskSecrets(v),
      ]),
    );
  }
  return value;
}

export function shapeResult(output: BackendOutput, ctx: ResultContext): LayeredResult {
  const { contract } = ctx;
  const violations = ctx.contracts.checkOutput(contract, output.structured_content);
  if (violations.length > 0) {
    const where = violations
      .slice(0, 3)
      .map((v) => `${v.pointer || "/"}: ${v.message}`)
      .join("; ");
    throw new WritError(
      "backend_unavailable",
      `the backend of ${contract.name} returned output that does not match its output schema (${where}); the output was withheld`,
      {
        retryable: false,
        effectCommitted: effectAfterRun(contract) ? "unknown" : false,
        suggestedFix: "report it to the operator of the tool backend; do not retry a committing call blindly",
      },
    );
  }

  let content = structuredClone(output.structured_content);
  const redacted: string[] = [];
  const rules = resultRedactions(ctx.conditions);
  const classification = contract.data_classification;
  if (WITHHELD_CLASSIFICATIONS.has(classification) || rules.classifications.includes(classification)) {
    content = {};
    redacted.push(`classification:${classification}`);
  } else {
    for (const pointer of rules.paths) if (removeAt(content, pointer)) redacted.push(pointer);
  }
  content = maskSecrets(content) as Record<string, unknown>;

  return {
    summary: scrubString(output.summary),
    structured_content: content,
    artifact_refs: (output.artifact_refs ?? []).map(scrubString),
    provenance: {
      tool: contract.name,
      version: contract.version,
      target: scrubString(ctx.target),
      time: new Date().toISOString(),
      resource_revision: ctx.resourceRevision === undefined ? null : String(ctx.resourceRevision),
    },
    execution_meta: {
      latency_ms: ctx.latencyMs,
      attempt: 1,
      request_id: ctx.requestId,
      effect: contract.side_effect,
    },
    ...(redacted.length > 0 ? { redacted } : {}),
  };
}

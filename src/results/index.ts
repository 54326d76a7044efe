/**
 * Result handling (DESIGN sections 1.9 and 7): the backend's output is validated against the
 * contract's `output_schema` (an invalid output is never returned), redacted by the contract's
 * data classification, the grant's `redact_result` conditions and the secret detectors, and
 * shaped as the layered result.
 */
import type { ContentBlock } from "@modelcontextprotocol/client";
import { resultRedactions } from "../conditions/index.ts";
import type { ContractRegistry, ToolContract } from "../contracts/index.ts";
import { WritError } from "../core/errors.ts";
import { isRecord } from "../core/json.ts";
import { unescapeToken } from "../core/json-pointer.ts";
import type { Condition } from "../core/types.ts";
import { isSensitiveKey, MASK, scrubString } from "../decisionlog/detectors.ts";

/**
 * One item of a result's content as MCP defines it (text, image, audio, embedded resource,
 * resource link): what an MCP server answered, kept as it sent it.
 */
export type ResultContent = ContentBlock;

export interface LayeredResult {
  summary: string;
  structured_content: Record<string, unknown>;
  /**
   * The backend's content items, as it sent them (redacted like structured_content); present
   * when the backend answers with content (MCP servers).
   */
  content?: ResultContent[];
  artifact_refs: string[];
  provenance: {
    tool: string;
    version: string;
    target: string;
    time: string;
    resource_revision: string | null;
  };
  execution_meta: { latency_ms: number; attempt: number; request_id: string; effect: string };
  /**
   * What was removed: JSON Pointers into structured_content, `/content/<i>` for a content item
   * withheld or rewritten, or `classification:<name>`; absent when nothing was.
   */
  redacted?: string[];
}

export interface BackendOutput {
  summary: string;
  structured_content: Record<string, unknown>;
  content?: ResultContent[];
  /** The tool ran and reported its own failure: shaped like a result, then raised as `tool_error`. */
  is_error?: boolean;
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

/** A text item's secrets scrubbed; binary data (images, audio, blobs) is never altered. */
function maskItem(item: ResultContent): ResultContent {
  switch (item.type) {
    case "text":
      return { ...item, text: scrubString(item.text) };
    case "resource": {
      const resource = item.resource;
      return "text" in resource
        ? { ...item, resource: { ...resource, text: scrubString(resource.text) } }
        : item;
    }
    case "resource_link":
      return item.description === undefined ? item : { ...item, description: scrubString(item.description) };
    default:
      return item;
  }
}

/**
 * The result's `redact_result` pointers applied to a text: a JSON object has them removed; any
 * other text cannot be searched for them, so it is withheld (fail closed).
 */
function redactText(text: string, pointers: readonly string[]): { text: string; changed: boolean } {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    document = undefined;
  }
  if (!isRecord(document)) {
    return {
      text: "(withheld: a redaction applies to this result and this text is not JSON)",
      changed: true,
    };
  }
  let changed = false;
  for (const pointer of pointers) if (removeAt(document, pointer)) changed = true;
  return changed ? { text: JSON.stringify(document), changed } : { text, changed };
}

/** The content items with the pointer redactions applied to their texts; `/content/<i>` when changed. */
function redactContent(
  items: readonly ResultContent[],
  pointers: readonly string[],
  redacted: string[],
): ResultContent[] {
  if (pointers.length === 0) return [...items];
  return items.map((item, index) => {
    if (item.type === "text") {
      const { text, changed } = redactText(item.text, pointers);
      if (changed) redacted.push(`/content/${index}`);
      return changed ? { ...item, text } : item;
    }
    if (item.type === "resource" && "text" in item.resource) {
      const { text, changed } = redactText(item.resource.text, pointers);
      if (changed) redacted.push(`/content/${index}`);
      return changed ? { ...item, resource: { ...item.resource, text } } : item;
    }
    return item;
  });
}

/**
 * A tool that ran and reported its own failure: the error callers see, with the tool's output
 * (redacted like any result) for those who can show it (MCP answers it as `isError` content).
 */
export class ToolFailedError extends WritError {
  constructor(
    contract: ToolContract,
    readonly result: LayeredResult,
  ) {
    const said = (result.content ?? [])
      .flatMap((item) => (item.type === "text" ? [item.text] : []))
      .join("\n")
      .trim()
      .slice(0, QUOTED_LIMIT);
    super("tool_error", `${result.summary}${said === "" ? "" : `: ${said}`}`, {
      suggestedFix:
        "read the tool's message, then change the arguments or the resource's state before proposing the call again",
      retryable: false,
      effectCommitted: effectAfterRun(contract) ? "unknown" : false,
    });
  }
}

/** Longest tool message quoted in a `tool_error`. */
const QUOTED_LIMIT = 300;

export function shapeResult(output: BackendOutput, ctx: ResultContext): LayeredResult {
  const { contract } = ctx;
  // An output schema describes what a tool answers when it succeeds (as in MCP).
  const violations = output.is_error ? [] : ctx.contracts.checkOutput(contract, output.structured_content);
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

  let structured = structuredClone(output.structured_content);
  let items = output.content;
  const redacted: string[] = [];
  const rules = resultRedactions(ctx.conditions);
  const classification = contract.data_classification;
  if (WITHHELD_CLASSIFICATIONS.has(classification) || rules.classifications.includes(classification)) {
    structured = {};
    if (items !== undefined) items = [];
    redacted.push(`classification:${classification}`);
  } else {
    for (const pointer of rules.paths) if (removeAt(structured, pointer)) redacted.push(pointer);
    if (items !== undefined) items = redactContent(items, rules.paths, redacted);
  }
  structured = maskSecrets(structured) as Record<string, unknown>;

  return {
    summary: scrubString(output.summary),
    structured_content: structured,
    ...(items === undefined ? {} : { content: items.map(maskItem) }),
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

/**
 * Stage 1 of the pipeline: the raw model output (`unknown`) becomes the list of tool calls it
 * proposes, read strictly by the adapter for its format.
 */
import { WritError } from "../core/errors.ts";
import type { ProposalFormat, ProposedCall } from "../core/types.ts";
import { anthropicAdapter } from "./anthropic.ts";
import { canonicalAdapter } from "./canonical.ts";
import { matchingFormats } from "./detect.ts";
import { type ConcreteFormat, isJsonObject, type ProposalAdapter } from "./lib/adapter.ts";
import { Problems } from "./lib/problems.ts";
import { mcpAdapter } from "./mcp.ts";
import { openaiChatAdapter } from "./openai-chat.ts";
import { openaiResponsesAdapter } from "./openai-responses.ts";

export interface ParsedProposal {
  format: ConcreteFormat;
  /** The calls in payload order; each gets its own decision. */
  calls: ProposedCall[];
}

const adapters: Record<ConcreteFormat, ProposalAdapter> = {
  "openai-chat": openaiChatAdapter,
  "openai-responses": openaiResponsesAdapter,
  anthropic: anthropicAdapter,
  mcp: mcpAdapter,
  canonical: canonicalAdapter,
};

const acceptedFormats = Object.values(adapters)
  .map((adapter) => `${adapter.format} (${adapter.shapes})`)
  .join("; ");

function detectFormat(payload: Record<string, unknown>): ConcreteFormat {
  const matches = matchingFormats(payload);
  const [only] = matches;
  if (only !== undefined && matches.length === 1) return only;
  const problem =
    matches.length === 0
      ? "the payload has the shape of no accepted format"
      : `the payload has the shape of several formats (${matches.join(", ")})`;
  throw new WritError("invalid_argument", `cannot tell the proposal format: ${problem}`, {
    fieldErrors: [{ path: "", message: problem }],
    suggestedFix: `Name the format explicitly, or send one of the accepted formats: ${acceptedFormats}.`,
  });
}

/** Call ids must be unique in a payload: each call's decision and grant are found by its id. */
function checkUniqueIds(calls: readonly ProposedCall[], adapter: ProposalAdapter, problems: Problems): void {
  const seen = new Map<string, string>();
  for (const call of calls) {
    const first = seen.get(call.callId);
    if (first === undefined) seen.set(call.callId, call.pointer);
    else
      problems.add(
        call.pointer,
        `call id ${JSON.stringify(call.callId)} is already used by the call at ${first || "/"}`,
      );
  }
  if (!problems.empty) {
    throw new WritError("invalid_argument", `the ${adapter.format} payload uses a call id twice`, {
      fieldErrors: problems.list,
      suggestedFix:
        "Give every call in the payload its own id (or leave canonical ids out and let Writ number them).",
    });
  }
}

/**
 * The tool calls proposed in `payload`, read as `format` (`auto`: detected from the shape).
 * Throws `WritError("invalid_argument")` with JSON Pointers into the payload when the payload is
 * not exactly that format, when an argument list is not a JSON object, or when it proposes no call.
 */
export function parseProposal(format: ProposalFormat, payload: unknown): ParsedProposal {
  if (!isJsonObject(payload)) {
    throw new WritError("invalid_argument", "the proposal payload must be a JSON object", {
      fieldErrors: [
        {
          path: "",
          message: `expected an object, got ${Array.isArray(payload) ? "an array" : typeof payload}`,
        },
      ],
      suggestedFix: `Send the model's output as a JSON object in one of the accepted formats: ${acceptedFormats}.`,
    });
  }
  const chosen = format === "auto" ? detectFormat(payload) : format;
  if (!Object.hasOwn(adapters, chosen)) {
    throw new WritError("invalid_argument", `unknown proposal format ${JSON.stringify(chosen)}`, {
      suggestedFix: `Use "auto" or one of: ${Object.keys(adapters).join(", ")}.`,
    });
  }
  const adapter = adapters[chosen];
  const problems = new Problems();
  const calls = adapter.read(payload, problems);
  if (!problems.empty) {
    const [first] = problems.list;
    const summary = first === undefined ? "" : `: ${first.path || "/"}: ${first.message}`;
    const more = problems.list.length > 1 ? ` (and ${problems.list.length - 1} more)` : "";
    throw new WritError("invalid_argument", `the ${adapter.format} payload is malformed${summary}${more}`, {
      fieldErrors: problems.list,
      suggestedFix: adapter.fix,
    });
  }
  if (calls.length === 0) {
    throw new WritError("invalid_argument", "the payload proposes no tool call", {
      fieldErrors: [{ path: "", message: `no tool call found in this ${adapter.format} payload` }],
      suggestedFix: `Send a model output that calls a tool (${adapter.shapes}); text-only answers need no authorization.`,
    });
  }
  checkUniqueIds(calls, adapter, problems);
  return { format: adapter.format, calls };
}

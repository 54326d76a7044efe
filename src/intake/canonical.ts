/**
 * Writ's own form: `{calls: [{id?, tool, arguments}]}` or one `{id?, tool, arguments}`. A call
 * without an id gets `call-<index>`, its position in the payload.
 */
import { z } from "zod";
import type { ProposedCall } from "../core/types.ts";
import { isJsonObject, type ProposalAdapter } from "./lib/adapter.ts";
import { readArgumentsObject } from "./lib/arguments.ts";
import { type Problems, pointerTo } from "./lib/problems.ts";

const canonicalCallSchema = z.strictObject({
  id: z.string().min(1).optional(),
  tool: z.string().min(1),
  arguments: z.unknown(),
});

const canonicalBatchSchema = z.strictObject({ calls: z.array(z.unknown()) });

function readCall(item: unknown, index: number, at: string, problems: Problems): ProposedCall | undefined {
  const call = problems.parse(canonicalCallSchema, item, at);
  if (call === undefined) return undefined;
  const args = readArgumentsObject(call.arguments, pointerTo(at, "arguments"), problems);
  if (args === undefined) return undefined;
  return {
    callId: call.id ?? `call-${index}`,
    tool: call.tool,
    arguments: args,
    source: "canonical",
    pointer: at,
  };
}

export const canonicalAdapter: ProposalAdapter = {
  format: "canonical",
  shapes: "{calls: [{id?, tool, arguments}]} or one {id?, tool, arguments}",
  fix: 'Send {"calls": [{"id": "…", "tool": "repo.read", "arguments": {…}}]} or a single {"tool": …, "arguments": {…}}; arguments is a JSON object.',
  read(payload, problems) {
    if (!isJsonObject(payload)) return [];
    if (!("calls" in payload)) {
      const call = readCall(payload, 0, "", problems);
      return call === undefined ? [] : [call];
    }
    const batch = problems.parse(canonicalBatchSchema, payload, "");
    if (batch === undefined) return [];
    const calls: ProposedCall[] = [];
    for (const [index, item] of batch.calls.entries()) {
      const call = readCall(item, index, pointerTo("", "calls", index), problems);
      if (call !== undefined) calls.push(call);
    }
    return calls;
  },
};

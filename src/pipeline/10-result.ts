/**
 * Stage 10, the result: the backend's output checked against the contract's output schema,
 * redacted (conditions, classification, secret patterns), and layered (DESIGN section 7). A tool
 * that reported its own failure is raised as `tool_error`, its redacted output attached.
 */
import type { Gateway } from "../core/gateway.ts";
import type { NormalizedCall } from "../normalize/index.ts";
import { type LayeredResult, shapeResult, ToolFailedError } from "../results/index.ts";
import type { Dispatched } from "./09-dispatch.ts";

export function result(
  gw: Pick<Gateway, "contracts">,
  n: NormalizedCall,
  ran: Dispatched,
  requestId: string,
): LayeredResult {
  const { output, claims, stored, started } = ran;
  const shaped = shapeResult(output, {
    contracts: gw.contracts,
    contract: n.contract,
    conditions: claims.cnd,
    target: output.target ?? (n.resource ? `${n.resource.type}/${n.resource.id}` : n.contract.name),
    resourceRevision: output.resource_revision ?? stored?.revision,
    latencyMs: Math.round((performance.now() - started) * 1000) / 1000,
    requestId,
  });
  if (output.is_error) throw new ToolFailedError(n.contract, shaped);
  return shaped;
}

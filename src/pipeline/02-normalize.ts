/**
 * Stage 2, normalization: each call to its contract, validated arguments, resource and digest.
 * A call that does not normalize is kept as its error: it is refused (and logged) on its own.
 */
import type { ContractRegistry } from "../contracts/index.ts";
import { WritError } from "../core/errors.ts";
import type { ProposedCall } from "../core/types.ts";
import { type NormalizedCall, normalize } from "../normalize/index.ts";

export function normalizeCalls(
  contracts: ContractRegistry,
  calls: readonly ProposedCall[],
): Array<NormalizedCall | WritError> {
  return calls.map((call) => {
    try {
      return normalize(call, contracts);
    } catch (error) {
      return WritError.from(error);
    }
  });
}

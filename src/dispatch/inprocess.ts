/** The `inprocess` backend kind: a handler registered in this process, by name. */
import { WritError } from "../core/errors.ts";
import type { Backend } from "./backend.ts";

export const inProcessBackend: Backend<"inprocess"> = {
  prepare(deps, { backend }) {
    const handler = deps.handlers.get(backend.handler);
    if (!handler) {
      throw new WritError(
        "backend_unavailable",
        `no in-process handler named ${backend.handler} is registered`,
        {
          suggestedFix: "check the tool's backend.handler in the configuration",
          retryable: false,
          effectCommitted: false,
        },
      );
    }
    return (args, stored) => handler({ args, resource: stored });
  },
};

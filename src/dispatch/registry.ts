/**
 * The backend of each kind: the one place dispatch tells backend kinds apart. A new kind is its
 * `Backend` (backend.ts) in its own module, listed here; TypeScript refuses a kind left out.
 */
import type { Backend, BackendCall, BackendDeps, BackendKind, BackendRun } from "./backend.ts";
import { httpBackend } from "./http.ts";
import { inProcessBackend } from "./inprocess.ts";
import { mcpPromptBackend, mcpResourceBackend, mcpToolBackend } from "./mcp/backends.ts";

const backends: { readonly [K in BackendKind]: Backend<K> } = {
  inprocess: inProcessBackend,
  http: httpBackend,
  mcp: mcpToolBackend,
  mcp_resource: mcpResourceBackend,
  mcp_prompt: mcpPromptBackend,
};

/**
 * How the call reaches its backend, resolved before its grant is spent (see `Backend.prepare`).
 */
export function prepareBackend<K extends BackendKind>(
  deps: BackendDeps,
  call: BackendCall<K>,
): BackendRun | Promise<BackendRun> {
  const backend: Backend<K> = backends[call.backend.kind];
  return backend.prepare(deps, call);
}

/** Stage 4, resource context: ownership and revision of the call's resource, from the store. */
import type { ResourceContext, ResourceRef } from "../core/types.ts";
import type { ResourceStore, StoredResource } from "../store/types.ts";

export interface ResourceLookup {
  /** What the policy sees; an unknown resource is passed as such (`known: false`). */
  context: ResourceContext;
  stored: StoredResource | undefined;
}

export async function resourceContext(
  store: Pick<ResourceStore, "getResource">,
  ref: ResourceRef | undefined,
): Promise<ResourceLookup> {
  if (!ref) return { context: { type: "none", id: "", known: false, attributes: {} }, stored: undefined };
  const stored = await store.getResource(ref.type, ref.id);
  if (!stored) return { context: { type: ref.type, id: ref.id, known: false, attributes: {} }, stored };
  return {
    context: {
      type: stored.type,
      id: stored.id,
      known: true,
      owner: stored.owner,
      tenant: stored.tenant,
      revision: String(stored.revision),
      attributes: stored.attributes,
    },
    stored,
  };
}

/** A grant request for tests: alice of tenant acme reading acme/site with `args`, unless overridden. */
import { jsonDigest } from "../../src/core/digest.ts";
import type { GrantRequest } from "../../src/grants/index.ts";

export function grantRequest(args: unknown, overrides: Partial<GrantRequest> = {}): GrantRequest {
  return {
    aud: "repo-service",
    sub: "alice",
    tnt: "acme",
    act: { name: "repo_read", version: "1.0.0" },
    res: { type: "repo", id: "acme/site" },
    args: jsonDigest(args),
    cnd: [],
    dec: "dec-1",
    pol: "pol-1",
    max: 1,
    ...overrides,
  };
}

/** Policy changes the tests of revisions, replay, shadow mode and the console make. */
import { readFile } from "node:fs/promises";
import { type TestGateway, waitFor } from "./gateway.ts";

/** A rule that tightens the sample policy: reads of README files are refused. */
export const README_CLOSED_RULE = `
denials contains reason("readme_closed", "README files are not to be read") if {
	input.action.name == "repo.read"
	contains(args.path, "README")
}
`;

/**
 * Appends `addition` to the gateway's decision.rego, waits for the watched reload and for the new
 * revision to be archived; resolves to the new revision id.
 */
export async function reloadWith(gw: TestGateway, addition: string): Promise<string> {
  const before = (await gw.health()).policy_revision;
  await gw.writePolicy(`${await readFile(gw.decisionRego, "utf8")}\n${addition}`);
  const revision = await waitFor(
    "the reload",
    async () => {
      const now = (await gw.health()).policy_revision;
      return now !== null && now !== before ? now : undefined;
    },
    10_000,
  );
  await waitFor("the reload's revision archived", async () =>
    (await gw.gateway.store.getPolicyRevision(revision)) ? true : undefined,
  );
  return revision;
}

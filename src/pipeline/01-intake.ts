/** Stage 1, intake: the provider's payload to proposed calls; a malformed payload is logged, then refused. */
import { WritError } from "../core/errors.ts";
import type { Gateway, ProposalRequest } from "../core/gateway.ts";
import type { ProposedCall } from "../core/types.ts";
import { refusalEntry } from "../decisionlog/index.ts";
import { parseProposal } from "../intake/index.ts";
import { currentRevision, logRequestRefusal } from "./08-log.ts";

export type IntakeRequest = Pick<
  ProposalRequest,
  "format" | "payload" | "proposed" | "session" | "requestId"
>;

export async function intake(gw: Gateway, req: IntakeRequest): Promise<ProposedCall[]> {
  // Read already by the entrance, with the same adapter (and refused and logged there if malformed).
  if (req.proposed !== undefined) return req.proposed;
  try {
    return parseProposal(req.format, req.payload).calls;
  } catch (error) {
    const e = WritError.from(error);
    await logRequestRefusal(
      gw,
      refusalEntry({
        input: { format: req.format, session: req.session ?? null },
        policyRevision: currentRevision(gw),
        subject: null,
        action: null,
        resource: null,
        error: e,
        requestId: req.requestId,
      }),
    );
    throw e;
  }
}

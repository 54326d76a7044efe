/** Approvals (DESIGN section 6): requests stored by the pipeline's approval stage, decided by approvers. */
export { type ApprovalRequestParts, requestApproval } from "../pipeline/06-approval.ts";
export { isEligibleApprover } from "./access.ts";
// Reading an approval as its requester collects the grant of an approved request (collect.ts).
export { readApproval } from "./collect.ts";
export { type ApproveResult, approve, reject } from "./decide.ts";
export { approvalView, listApprovals } from "./read.ts";

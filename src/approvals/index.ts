/** Approvals (DESIGN section 6): requests stored by the pipeline, decided by approvers. */
export {
  APPROVALS_PATH,
  type ApprovalRequestParts,
  type ApproveResult,
  approvalView,
  approve,
  listApprovals,
  readApproval,
  reject,
  requestApproval,
} from "./service.ts";

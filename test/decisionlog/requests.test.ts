/**
 * The requests a log's entries are appended for are the log's own (issue 28: before, a
 * process-global map): two gateways in one process never see each other's requests, a refusal
 * is noted in the request that appended it, and a closed request is forgotten.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DecisionLog, type DecisionParts } from "../../src/decisionlog/index.ts";
import { SqliteStore } from "../../src/store/index.ts";
import { tempDir } from "../store/fixtures.ts";

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

async function openLog() {
  return new DecisionLog(tmp.track(await SqliteStore.open(tmp.file())));
}

function refusal(requestId: string): DecisionParts {
  return {
    path: "writ/intake",
    input: {},
    policy_revision: "none",
    subject: null,
    tenant: null,
    action: null,
    resource: null,
    decision: "error",
    error: "invalid_argument",
    request_id: requestId,
  };
}

describe("a log's open requests", () => {
  it("belong to that log: another log's entries with the same request id get neither caller id nor note", async () => {
    const first = await openLog();
    const second = await openLog();
    const request = first.requests.open("r-1", "trace-7");
    const other = await second.append(refusal("r-1"));
    expect((await second.get(other.decision_id))?.caller_request_id).toBeUndefined();
    expect(request.refusalLogged).toBe(false);
    const own = await first.append(refusal("r-1"));
    expect((await first.get(own.decision_id))?.caller_request_id).toBe("trace-7");
    expect(request.refusalLogged).toBe(true);
    request.close();
    expect(first.requests.size).toBe(0);
    const later = await first.append(refusal("r-1"));
    expect((await first.get(later.decision_id))?.caller_request_id).toBeUndefined();
  });

  it("note an allowed entry as no refusal, and a refusal of a request open twice in neither", async () => {
    const log = await openLog();
    const once = log.requests.open("r-once");
    await log.append({ ...refusal("r-once"), decision: "allow", error: null });
    expect(once.refusalLogged).toBe(false);
    const a = log.requests.open("r-twice");
    const b = log.requests.open("r-twice");
    await log.append(refusal("r-twice"));
    expect([a.refusalLogged, b.refusalLogged]).toEqual([false, false]);
    for (const r of [once, a, b, b]) r.close();
    expect(log.requests.size).toBe(0);
  });
});

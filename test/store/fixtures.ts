/** Shared by the store and decision-log tests: temporary database files and sample entries. */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { NewDecisionEntry } from "../../src/store/index.ts";

/** A fresh temporary folder; `cleanup()` closes what was registered and removes the folder. */
export function tempDir(): {
  dir: string;
  file: (name?: string) => string;
  cleanup: () => Promise<void>;
  track: <T extends { close(): unknown }>(closable: T) => T;
} {
  const dir = mkdtempSync(path.join(tmpdir(), "writ-store-test-"));
  const open: { close(): unknown }[] = [];
  return {
    dir,
    file: (name = "writ.db") => path.join(dir, name),
    track: (closable) => {
      open.push(closable);
      return closable;
    },
    cleanup: async () => {
      for (const closable of open.reverse()) await closable.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function newEntry(overrides: Partial<NewDecisionEntry> = {}): NewDecisionEntry {
  return {
    decision_id: randomUUID(),
    timestamp: "2025-01-01T00:00:00.000Z",
    path: "writ/decision",
    input: { action: { name: "repo_read", args: { path: "README.md" } } },
    result: { decision: "allow", reasons: [], conditions: [] },
    bundles: { writ: { revision: "rev-1" } },
    metrics: { timer_eval_ns: 1200 },
    erased: [],
    masked: [],
    subject: "alice",
    tenant: "acme",
    action: "repo_read",
    resource: { type: "repo", id: "acme/site" },
    decision: "allow",
    reasons: [],
    error: null,
    grant_jti: null,
    approval_id: null,
    conditions: [],
    request_id: "req-1",
    ...overrides,
  };
}

/**
 * A fact's key is what the store's buckets are found by (`history_buckets.key_hash`): SHA-256 of
 * the canonical JSON (RFC 8785) of the tenant and the call's key values. Computed the quick way
 * for flat values and from the digests of recent calls, it must stay that digest exactly, or
 * the buckets already written would no longer be found (a daily sum would start again at 0).
 */
import { describe, expect, it } from "vitest";
import { jsonDigest } from "../../src/core/digest.ts";
import { History, type HistoryCall, historyConfigSchema } from "../../src/history/index.ts";

const history = new History(
  historyConfigSchema.parse([
    { name: "by_path", per: ["session", "args.workspace", "args.path"], window_s: 3600 },
    { name: "by_filter", per: ["subject", "args.filter"], window_s: 3600 },
    { name: "by_resource", per: ["resource", "args./n"], window_s: 60 },
  ]),
);

function call(args: Record<string, unknown>): HistoryCall {
  return {
    subject: { id: "alice", tenant: "t1" },
    action: { name: "repo.read", args },
    session: "s-1",
    resource: { type: "workspace", id: "ws \u00e9\ud800" },
  };
}

function keys(args: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(history.applicable(call(args)).map((a) => [a.fact.name, a.key]));
}

describe("history fact keys", () => {
  it("are the digest of the canonical JSON of the tenant and the key values, computed anew or kept", () => {
    const args = { workspace: "ws-1", path: 'a/"b"\n', n: 1e21, filter: { z: [1, { b: 2, a: 1 }], a: 0.1 } };
    const expected = {
      by_path: jsonDigest(["t1", "s-1", "ws-1", 'a/"b"\n']),
      by_filter: jsonDigest(["t1", "alice", { z: [1, { b: 2, a: 1 }], a: 0.1 }]),
      by_resource: jsonDigest(["t1", ["workspace", "ws \u00e9\ud800"], 1e21]),
    };
    expect(keys(args)).toEqual(expected);
    // The second time from the digests kept; the object's key order does not matter.
    expect(keys({ ...args, filter: { a: 0.1, z: [1, { a: 1, b: 2 }] } })).toEqual(expected);
    expect(keys({ ...args, path: "other" }).by_path).toBe(jsonDigest(["t1", "s-1", "ws-1", "other"]));
    const long = "x".repeat(5000);
    expect(keys({ ...args, path: long }).by_path).toBe(jsonDigest(["t1", "s-1", "ws-1", long]));
    expect(keys({ ...args, n: -0 }).by_resource).toBe(
      jsonDigest(["t1", ["workspace", "ws \u00e9\ud800"], 0]),
    );
  });

  it("are absent for a fact whose key value the call lacks", () => {
    expect(Object.keys(keys({ workspace: "ws-1" }))).toEqual([]);
  });
});

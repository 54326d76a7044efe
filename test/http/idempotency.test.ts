/** `idempotent()` against an in-memory SQLite store: what is replayed, stored or released. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WritError } from "../../src/core/errors.ts";
import type { Subject } from "../../src/core/types.ts";
import { idempotencyKeyOf, idempotent, type StoredAnswer } from "../../src/http/idempotency.ts";
import { SqliteStore } from "../../src/store/sqlite.ts";

let store: SqliteStore;
const alice: Subject = { id: "alice", tenant: "demo", roles: [], scopes: [], issuer: "test", claims: {} };
const bob: Subject = { ...alice, id: "bob" };

beforeAll(async () => {
  store = await SqliteStore.open(":memory:");
});

afterAll(async () => {
  await store?.close();
});

/** `answer` as work, counting its runs. */
function counted(answer: () => Promise<StoredAnswer>) {
  const work = async () => {
    work.runs++;
    return answer();
  };
  work.runs = 0;
  return work;
}

async function rejection(promise: Promise<unknown>): Promise<WritError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WritError) return error;
    throw error;
  }
  throw new Error("resolved");
}

describe("idempotent", () => {
  it("runs once and replays the stored answer to the same subject's repeat", async () => {
    const work = counted(async () => ({ status: 200, body: { n: 1 } }));
    const first = await idempotent(store, alice, "k-1", { route: "execute", a: 1 }, work);
    const again = await idempotent(store, alice, "k-1", { route: "execute", a: 1 }, work);
    expect(again).toEqual(first);
    expect(work.runs).toBe(1);
    // Keys belong to their subject.
    await idempotent(store, bob, "k-1", { route: "execute", a: 1 }, work);
    expect(work.runs).toBe(2);
  });

  it("refuses the key for a different request", async () => {
    await idempotent(store, alice, "k-2", { a: 1 }, async () => ({ status: 200, body: {} }));
    const e = await rejection(
      idempotent(store, alice, "k-2", { a: 2 }, async () => ({ status: 200, body: {} })),
    );
    expect(e).toMatchObject({ category: "conflict", retryable: false });
  });

  it("refuses a repeat while the first request still runs", async () => {
    let finish: (answer: StoredAnswer) => void = () => {};
    const first = idempotent(store, alice, "k-3", {}, () => new Promise((resolve) => (finish = resolve)));
    const e = await rejection(idempotent(store, alice, "k-3", {}, async () => ({ status: 200, body: {} })));
    expect(e).toMatchObject({ category: "conflict", retryable: true });
    finish({ status: 200, body: { done: true } });
    expect((await first).body).toEqual({ done: true });
  });

  it("stores a failure that committed (or may have committed) its effect as the answer", async () => {
    const failing = counted(async () => {
      throw new WritError("timeout", "the backend did not answer", {
        suggestedFix: "check before retrying",
        effectCommitted: "unknown",
      });
    });
    const answer = await idempotent(store, alice, "k-4", {}, failing);
    expect(answer.status).toBe(504);
    expect(await idempotent(store, alice, "k-4", {}, failing)).toEqual(answer);
    expect(failing.runs).toBe(1);
  });

  it("stores a refusal that ran nothing, and still throws it the first time", async () => {
    const refusal = new WritError("policy_denied", "no", { suggestedFix: "ask", effectCommitted: false });
    const refused = counted(async () => {
      throw refusal;
    });
    expect(await rejection(idempotent(store, alice, "k-5", {}, refused))).toBe(refusal);
    expect((await idempotent(store, alice, "k-5", {}, refused)).status).toBe(403);
    expect(refused.runs).toBe(1);
  });

  it("releases the key after an internal failure, so a retry runs again", async () => {
    const flaky = counted(async () => {
      if (flaky.runs === 1) throw new Error("disk full");
      return { status: 200, body: { ok: true } };
    });
    await expect(idempotent(store, alice, "k-6", {}, flaky)).rejects.toThrow("disk full");
    expect((await idempotent(store, alice, "k-6", {}, flaky)).body).toEqual({ ok: true });
    expect(flaky.runs).toBe(2);
  });
});

describe("idempotencyKeyOf", () => {
  it("is undefined without the header and checks its length", () => {
    expect(idempotencyKeyOf(undefined)).toBeUndefined();
    expect(idempotencyKeyOf("abc")).toBe("abc");
    const e = (() => {
      try {
        idempotencyKeyOf("x".repeat(201));
      } catch (error) {
        return error;
      }
    })();
    expect(e).toBeInstanceOf(WritError);
    expect(e).toMatchObject({
      category: "invalid_argument",
      fieldErrors: [{ path: "/headers/idempotency-key" }],
    });
  });
});

/**
 * The `requestState` of an approval round (src/mcp/request-state.ts): minted with the gateway's
 * grant keys, it verifies for its caller and its call only, refuses any change to its bytes,
 * expires, survives a key rotation, verifies on another instance sharing the key set, and is
 * never taken for a grant (nor a grant for it).
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { verifyGrant } from "../../src/executor/index.ts";
import { GrantSigner } from "../../src/grants/index.ts";
import type { ProposedMessage } from "../../src/mcp/methods/approved.ts";
import {
  mintRequestState,
  RequestStateError,
  type StateBinding,
  verifyRequestState,
} from "../../src/mcp/request-state.ts";
import { type UnitGateway, unitGateway } from "../pipeline/harness.ts";

const T0 = new Date("2030-01-01T00:00:00Z").getTime();
let clock = T0;
let u: UnitGateway;
beforeEach(async () => {
  clock = T0;
  u = await unitGateway({ now: () => new Date(clock) });
});
afterEach(() => u.close());

const CALL: ProposedMessage = {
  method: "tools/call",
  params: { name: "notes_write", arguments: { note: "n1" } },
};
const alice = { id: "alice", tenant: "t1" };
const binding: StateBinding = { subject: alice, call: CALL, approvalId: "apr-1" };
const inAMinute = () => new Date(clock + 60_000);

/** The refusal `verify` rejects with (fails the test when it resolves or throws anything else). */
async function refusalOf(p: Promise<unknown>): Promise<RequestStateError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof RequestStateError))
    throw new Error(`expected a RequestStateError, got ${String(error)}`);
  expect(error.category).toBe("invalid_argument");
  expect(error.suggestedFix).toContain("without requestState");
  return error;
}

/** `state` with one character of part `part` (0 header, 1 payload, 2 signature) changed. */
function tampered(state: string, part: number): string {
  const parts = state.split(".");
  const text = parts[part] ?? "";
  const at = Math.floor(text.length / 2);
  parts[part] = `${text.slice(0, at)}${text[at] === "A" ? "B" : "A"}${text.slice(at + 1)}`;
  return parts.join(".");
}

describe("a request state", () => {
  it("verifies for its caller and its call, naming its approval", async () => {
    const state = await mintRequestState(u.gw, binding, inAMinute());
    expect(await verifyRequestState(u.gw, state, { subject: alice, call: CALL })).toEqual({
      approvalId: "apr-1",
    });
    // The arguments' key order does not matter (canonical JSON).
    const reordered: ProposedMessage = {
      method: "tools/call",
      params: { arguments: { note: "n1" }, name: "notes_write" },
    };
    expect((await verifyRequestState(u.gw, state, { subject: alice, call: reordered })).approvalId).toBe(
      "apr-1",
    );
  });

  it("refuses any change to its header, payload or signature, and garbage", async () => {
    const state = await mintRequestState(u.gw, binding, inAMinute());
    for (const part of [0, 1, 2]) {
      const refused = await refusalOf(
        verifyRequestState(u.gw, tampered(state, part), { subject: alice, call: CALL }),
      );
      expect(["signature", "malformed"]).toContain(refused.reason);
    }
    // Another state's payload under this one's signature.
    const other = await mintRequestState(u.gw, { ...binding, approvalId: "apr-2" }, inAMinute());
    const [header, , signature] = state.split(".");
    const spliced = `${header}.${other.split(".")[1]}.${signature}`;
    expect((await refusalOf(verifyRequestState(u.gw, spliced, { subject: alice, call: CALL }))).reason).toBe(
      "signature",
    );
    for (const junk of ["", "v1.abc.def", "not a state", "x".repeat(5000)]) {
      expect((await refusalOf(verifyRequestState(u.gw, junk, { subject: alice, call: CALL }))).reason).toBe(
        "malformed",
      );
    }
  });

  it("is refused to another caller (id or tenant)", async () => {
    const state = await mintRequestState(u.gw, binding, inAMinute());
    for (const subject of [
      { id: "bob", tenant: "t1" },
      { id: "alice", tenant: "t2" },
    ]) {
      const refused = await refusalOf(verifyRequestState(u.gw, state, { subject, call: CALL }));
      expect(refused.reason).toBe("subject");
    }
  });

  it("is refused for another call (arguments, name or method)", async () => {
    const state = await mintRequestState(u.gw, binding, inAMinute());
    const others: ProposedMessage[] = [
      { method: "tools/call", params: { name: "notes_write", arguments: { note: "n2" } } },
      { method: "tools/call", params: { name: "notes_write", arguments: { note: "n1", text: "x" } } },
      { method: "tools/call", params: { name: "notes_read", arguments: { note: "n1" } } },
      { method: "prompts/get", params: { name: "notes_write", arguments: { note: "n1" } } },
    ];
    for (const call of others) {
      expect((await refusalOf(verifyRequestState(u.gw, state, { subject: alice, call }))).reason).toBe(
        "call",
      );
    }
  });

  it("expires", async () => {
    const state = await mintRequestState(u.gw, binding, inAMinute());
    clock += 59_000;
    expect((await verifyRequestState(u.gw, state, { subject: alice, call: CALL })).approvalId).toBe("apr-1");
    clock += 2_000;
    expect((await refusalOf(verifyRequestState(u.gw, state, { subject: alice, call: CALL }))).reason).toBe(
      "expired",
    );
  });

  it("is refused when another gateway's keys signed it", async () => {
    const other = await unitGateway();
    try {
      const foreign = await mintRequestState(other.gw, binding, new Date(Date.now() + 60_000));
      expect(
        (await refusalOf(verifyRequestState(u.gw, foreign, { subject: alice, call: CALL }))).reason,
      ).toBe("signature");
    } finally {
      await other.close();
    }
  });

  it("still verifies after the grant keys rotate", async () => {
    const state = await mintRequestState(u.gw, binding, inAMinute());
    const signer = u.gw.grants;
    if (!(signer instanceof GrantSigner)) throw new Error("the unit gateway signs with a GrantSigner");
    await signer.rotate();
    expect((await verifyRequestState(u.gw, state, { subject: alice, call: CALL })).approvalId).toBe("apr-1");
  });

  it("verifies on another instance sharing the key set, also after that one rotated it", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "writ-state-"));
    try {
      const keyFile = path.join(dir, "grant-keys.json");
      const clockNow = () => clock;
      const one = {
        ...u.gw,
        grants: await GrantSigner.create({ issuer: "writ-unit", key_file: keyFile }, { clock: clockNow }),
      };
      const two = {
        ...u.gw,
        grants: await GrantSigner.create({ issuer: "writ-unit", key_file: keyFile }, { clock: clockNow }),
      };
      const state = await mintRequestState(one, binding, inAMinute());
      expect((await verifyRequestState(two, state, { subject: alice, call: CALL })).approvalId).toBe("apr-1");
      // `one` rotates twice: `two` has never seen the key that signs now, and looks again.
      await one.grants.rotate();
      await one.grants.rotate();
      const fresh = await mintRequestState(one, binding, inAMinute());
      expect((await verifyRequestState(two, fresh, { subject: alice, call: CALL })).approvalId).toBe("apr-1");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("is not a grant, and a grant is not a state", async () => {
    const state = await mintRequestState(u.gw, binding, inAMinute());
    const asGrant = await verifyGrant(state, {
      issuer: u.gw.grants.issuer,
      audience: "writ-unit-executor",
      keys: u.gw.grants.jwks(),
      action: { name: "notes.write", version: "1" },
      args: { note: "n1" },
      replay: false,
    }).then(
      () => "accepted",
      (error: unknown) => (error instanceof Error && "code" in error ? error.code : String(error)),
    );
    expect(asGrant).toBe("wrong_type");

    const grant = await u.gw.grants.issue({
      aud: "writ-unit-executor",
      sub: "alice",
      tnt: "t1",
      act: { name: "notes.write", version: "1" },
      res: { type: "note", id: "n1" },
      args: "0".repeat(64),
      cnd: [],
      dec: "d1",
      pol: "p1",
      max: 1,
    });
    expect(
      (await refusalOf(verifyRequestState(u.gw, grant.token, { subject: alice, call: CALL }))).reason,
    ).toBe("malformed");
    await expect(u.gw.grants.signDocument("writ-grant+jwt", { sub: "alice", exp: 1 })).rejects.toThrow(
      /issue\(\)/,
    );
  });
});

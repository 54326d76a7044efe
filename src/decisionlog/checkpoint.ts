/**
 * Signed checkpoints of the decision log's head (issue 15, head anchoring). The hash chain shows
 * an edit, a deletion or a reordering inside the log, but not a tail cut off: the shorter log is
 * a valid chain. A checkpoint is `{seq, hash, time}` of the head, signed (compact JWS) with the
 * checkpoint key, and stored in the store (`checkpoints`) and, when configured, at a witness
 * outside it. `writ logs verify` then fails when the log ends before a checkpoint's seq or holds
 * another entry there.
 *
 * The `Checkpointer` writes one every `interval_s` when the head moved, and one on shutdown.
 * Several instances on one store may each write one; one per seq is kept (the first), and only
 * the instance whose checkpoint was kept ships it to the witness.
 */
import { type CompactVerifyResult, compactVerify, createLocalJWKSet, errors as joseErrors } from "jose";
import { z } from "zod";
import { errorMessage, WritError } from "../core/errors.ts";
import { grantAlgorithms } from "../grants/key-set.ts";
import { hashSchema } from "../store/schema.ts";
import type { CheckpointStore, DecisionStore, StoredCheckpoint } from "../store/types.ts";
import {
  asJwkSet,
  CHECKPOINT_TYP,
  type CheckpointJwks,
  CheckpointKeys,
  checkpointKeyFile,
} from "./checkpoint-keys.ts";
import { type Witness, type WitnessConfig, witnessOf } from "./checkpoint-witness.ts";

/** `decision_log.checkpoints` in the gateway configuration. */
export const checkpointsConfigSchema = z
  .object({
    /** Write checkpoints (default true). */
    enabled: z.boolean().default(true),
    /** How often the head is checkpointed when it moved. */
    interval_s: z.number().positive().default(60),
    /** A key file for the checkpoint key; without one the key set is kept in the store. */
    key_file: z.string().min(1).optional(),
    algorithm: z.enum(grantAlgorithms).default("EdDSA"),
  })
  .strict();
export type CheckpointsConfig = z.output<typeof checkpointsConfigSchema>;

/** What a checkpoint signs. */
export const checkpointPayloadSchema = z
  .object({
    seq: z.number().int().positive(),
    hash: hashSchema,
    time: z.iso.datetime({ offset: true }),
  })
  .strict();
export type CheckpointPayload = z.output<typeof checkpointPayloadSchema>;

/** Each published key set made into jose's key lookup once (a verify checks many checkpoints). */
const keySets = new WeakMap<CheckpointJwks, ReturnType<typeof createLocalJWKSet>>();

function keySetOf(keys: CheckpointJwks): ReturnType<typeof createLocalJWKSet> {
  let keySet = keySets.get(keys);
  if (keySet === undefined) {
    keySet = createLocalJWKSet(asJwkSet(keys));
    keySets.set(keys, keySet);
  }
  return keySet;
}

export type CheckpointVerification =
  | { ok: true; payload: CheckpointPayload; kid: string }
  | { ok: false; reason: "bad_signature" | "malformed"; detail: string };

/**
 * Verifies a checkpoint's signature against published keys (`undefined`: none known) and reads
 * its payload. A forged, altered or foreign-key checkpoint is `bad_signature`.
 */
export async function verifyCheckpoint(
  jws: string,
  keys: CheckpointJwks | undefined,
): Promise<CheckpointVerification> {
  if (keys === undefined || keys.keys.length === 0) {
    return { ok: false, reason: "bad_signature", detail: "no checkpoint keys are known to verify it with" };
  }
  let verified: CompactVerifyResult;
  try {
    verified = await compactVerify(jws, keySetOf(keys), {
      algorithms: [...grantAlgorithms],
    });
  } catch (error) {
    const malformed = error instanceof joseErrors.JWSInvalid;
    return {
      ok: false,
      reason: malformed ? "malformed" : "bad_signature",
      detail: malformed
        ? `not a compact JWS (${errorMessage(error)})`
        : `the signature does not verify with the published checkpoint keys (${errorMessage(error)})`,
    };
  }
  if (verified.protectedHeader.typ !== CHECKPOINT_TYP) {
    return {
      ok: false,
      reason: "bad_signature",
      detail: `signed as ${String(verified.protectedHeader.typ)}, not a checkpoint`,
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(verified.payload));
  } catch {
    json = undefined;
  }
  const payload = checkpointPayloadSchema.safeParse(json);
  if (!payload.success) {
    return { ok: false, reason: "malformed", detail: "the signed payload is not {seq, hash, time}" };
  }
  return { ok: true, payload: payload.data, kid: verified.protectedHeader.kid ?? "" };
}

export interface CheckpointerOptions {
  store: DecisionStore & CheckpointStore;
  keys: CheckpointKeys;
  /** How often the head is checkpointed when it moved (0: only on demand and on close). */
  intervalMs: number;
  witness?: Witness;
  now?: () => Date;
  /** Problems in the background (a failed write, a witness that does not answer, a shortened log). */
  onError?: (error: unknown) => void;
}

/** Unshipped checkpoints kept for the witness while it is unreachable. */
const MAX_UNSHIPPED = 100;

/** Checkpoints as the gateway's parts use them (`Gateway.checkpoints`). */
export interface CheckpointPublisher {
  /** The keys checkpoints are signed with, as a JWK set. */
  jwks(): CheckpointJwks;
  /** Signs a checkpoint of the log's head now (undefined: the head has one already). */
  checkpoint(): Promise<StoredCheckpoint | undefined>;
}

export class Checkpointer implements CheckpointPublisher {
  readonly #store: DecisionStore & CheckpointStore;
  readonly #keys: CheckpointKeys;
  readonly #intervalMs: number;
  readonly #witness: Witness | undefined;
  readonly #now: () => Date;
  readonly #onError: (error: unknown) => void;
  readonly #unshipped: StoredCheckpoint[] = [];
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> = Promise.resolve();

  constructor(options: CheckpointerOptions) {
    this.#store = options.store;
    this.#keys = options.keys;
    this.#intervalMs = options.intervalMs;
    this.#witness = options.witness;
    this.#now = options.now ?? (() => new Date());
    this.#onError =
      options.onError ?? ((error) => console.error(`decision log checkpoint: ${errorMessage(error)}`));
  }

  /** The published keys that verify this instance's checkpoints. */
  jwks(): CheckpointJwks {
    return this.#keys.jwks();
  }

  /**
   * Checkpoints now (so that a log cut while the gateway was down is reported at start) and every
   * `intervalMs` from now on (the timer does not keep the process alive).
   */
  start(): void {
    if (this.#timer !== undefined || this.#intervalMs <= 0) return;
    this.checkpoint().catch(this.#onError);
    this.#timer = setInterval(() => {
      this.checkpoint().catch(this.#onError);
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /**
   * Signs and stores a checkpoint of the current head, unless the newest checkpoint already
   * covers it; resolves with the checkpoint this call stored (undefined when none). Runs one at a
   * time. Refuses (and writes nothing) when the log now ends before, or differs at, the newest
   * checkpoint: the log was cut back or rewritten behind Writ's back.
   */
  checkpoint(): Promise<StoredCheckpoint | undefined> {
    const run = this.#running.then(() => this.#checkpoint());
    this.#running = run.catch(() => {});
    return run;
  }

  /** Stops the timer and writes a last checkpoint (call after the log drained, before the store closes). */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.checkpoint().catch(this.#onError);
  }

  async #checkpoint(): Promise<StoredCheckpoint | undefined> {
    await this.#ship();
    const head = await this.#store.decisionHead();
    const latest = await this.#store.latestCheckpoint();
    if (latest !== undefined && (head === undefined || head.seq < latest.seq)) {
      throw new WritError(
        "internal",
        `the decision log ends at seq ${head?.seq ?? 0}, before its checkpoint of seq ${latest.seq} (${latest.time}): entries were deleted`,
        { suggestedFix: "run `writ logs verify`, and restore the store from a backup" },
      );
    }
    if (head === undefined) return undefined;
    if (latest?.seq === head.seq) {
      if (latest.hash === head.hash) return undefined;
      throw new WritError(
        "internal",
        `the decision log's entry at seq ${head.seq} differs from its checkpoint (${latest.time}): the log was rewritten`,
        { suggestedFix: "run `writ logs verify`, and restore the store from a backup" },
      );
    }
    const payload: CheckpointPayload = { seq: head.seq, hash: head.hash, time: this.#now().toISOString() };
    const checkpoint: StoredCheckpoint = {
      ...payload,
      kid: this.#keys.kid,
      jws: await this.#keys.sign(payload),
    };
    // Another instance may have checkpointed the same head first: its checkpoint stands.
    if (!(await this.#store.addCheckpoint(checkpoint))) return undefined;
    if (this.#witness !== undefined) {
      this.#unshipped.push(checkpoint);
      this.#unshipped.splice(0, Math.max(0, this.#unshipped.length - MAX_UNSHIPPED));
      await this.#ship();
    }
    return checkpoint;
  }

  /** Sends the checkpoints the witness has not acknowledged yet, oldest first; keeps them on failure. */
  async #ship(): Promise<void> {
    const witness = this.#witness;
    if (witness === undefined) return;
    while (this.#unshipped.length > 0) {
      const next = this.#unshipped[0];
      if (next === undefined) return;
      try {
        await witness.ship(next);
      } catch (error) {
        this.#onError(
          new WritError(
            "backend_unavailable",
            `the checkpoint of seq ${next.seq} did not reach the ${witness.description}: ${errorMessage(error)}`,
            {
              retryable: true,
              suggestedFix: "check the witness; unshipped checkpoints are sent again with the next one",
              cause: error,
            },
          ),
        );
        return;
      }
      this.#unshipped.shift();
    }
  }
}

/** `decision_log` in the gateway configuration, as far as checkpoints go. */
export interface CheckpointingConfig {
  checkpoints: CheckpointsConfig;
  witness?: WitnessConfig | undefined;
}

/**
 * The gateway's checkpointer, started (undefined when checkpoints are off): its key from the key
 * file or the store, its witness from the configuration (`headers` resolves a credentials_ref).
 */
export async function startCheckpointer(
  config: CheckpointingConfig,
  store: DecisionStore & CheckpointStore,
  headers: (ref: string) => Promise<Record<string, string>>,
): Promise<Checkpointer | undefined> {
  const { checkpoints, witness } = config;
  if (!checkpoints.enabled) return undefined;
  const storage =
    checkpoints.key_file === undefined ? store.checkpointKeySet() : checkpointKeyFile(checkpoints.key_file);
  const checkpointer = new Checkpointer({
    store,
    keys: await CheckpointKeys.open(storage, checkpoints.algorithm),
    intervalMs: checkpoints.interval_s * 1000,
    ...(witness === undefined ? {} : { witness: witnessOf(witness, headers) }),
  });
  checkpointer.start();
  return checkpointer;
}

/**
 * The checkpoint signing key (issue 15, head anchoring): a key of its own, never a grant key,
 * kept like the grant keys (the same key-set document) in `decision_log.checkpoints.key_file` or,
 * without one, in the store (table `checkpoint_key_set`), so that every instance on the store
 * signs with the same key and `writ logs verify` finds its public half. Its public keys are
 * published apart from the grant keys, at `/.well-known/writ-checkpoint-keys.json`.
 */
import { CompactSign, type JSONWebKeySet } from "jose";
import { WritError } from "../core/errors.ts";
import {
  type GrantAlgorithm,
  type GrantJwk,
  type LoadedKey,
  loadKeys,
  newKey,
  readKeySet,
  serialize,
} from "../grants/key-set.ts";
import { KeyFileStorage, type KeySetStorage } from "../grants/key-storage.ts";

/** The `typ` of a checkpoint's protected header: a checkpoint is never mistaken for another JWS. */
export const CHECKPOINT_TYP = "writ-checkpoint+jws";

/** The published verification keys of checkpoints. */
export interface CheckpointJwks {
  keys: GrantJwk[];
}

/** A key file for checkpoint keys (0600, replaced atomically: the grant key file's format). */
export function checkpointKeyFile(file: string): KeySetStorage {
  const inner = new KeyFileStorage(file);
  return {
    description: `checkpoint key file ${file}`,
    read: () => inner.read(),
    create: (text) => inner.create(text),
    replace: (change) => inner.replace(change),
    stamp: () => inner.stamp(),
  };
}

export class CheckpointKeys {
  readonly #current: LoadedKey;
  readonly #jwks: CheckpointJwks;

  private constructor(keys: LoadedKey[]) {
    const current = keys.find((key) => key.record.status === "current");
    if (current === undefined) throw new Error("a key set without a current key passed validation");
    this.#current = current;
    this.#jwks = { keys: keys.map((key) => ({ ...key.publicJwk })) };
  }

  /** Loads the key set from `storage`, creating it (one current key) when there is none yet. */
  static async open(
    storage: KeySetStorage,
    algorithm: GrantAlgorithm = "EdDSA",
    now: () => number = Date.now,
  ): Promise<CheckpointKeys> {
    let existing = await readKeySet(storage);
    if (existing === undefined) {
      await storage.create(serialize([await newKey(algorithm, "current", Math.floor(now() / 1000))]));
      // Another instance may have created the key set first: whatever is stored wins.
      existing = await readKeySet(storage);
      if (existing === undefined) {
        throw new WritError("internal", `the ${storage.description} vanished right after it was created`, {
          suggestedFix: "check that nothing else deletes it, then restart",
        });
      }
    }
    return new CheckpointKeys(loadKeys(existing.file.keys));
  }

  /** The public keys stored in `storage` (every key, retired ones too), or undefined when there are none. */
  static async published(storage: KeySetStorage): Promise<CheckpointJwks | undefined> {
    const existing = await readKeySet(storage);
    return existing === undefined ? undefined : new CheckpointKeys(loadKeys(existing.file.keys)).jwks();
  }

  get kid(): string {
    return this.#current.record.kid;
  }

  /** Every key of the set, retired ones too: old checkpoints must stay verifiable. */
  jwks(): CheckpointJwks {
    return { keys: this.#jwks.keys.map((key) => ({ ...key })) };
  }

  /** The compact JWS of `payload` with the current key. */
  async sign(payload: unknown): Promise<string> {
    return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: this.#current.record.alg, kid: this.kid, typ: CHECKPOINT_TYP })
      .sign(this.#current.privateKey);
  }
}

/** A JWKS as jose takes it. */
export function asJwkSet(jwks: CheckpointJwks): JSONWebKeySet {
  return { keys: jwks.keys.map((key) => ({ ...key })) };
}

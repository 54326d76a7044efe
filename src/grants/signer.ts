/**
 * The grant signer (DESIGN section 5): signs grants with Ed25519 (or P-256) keys named by `kid`,
 * publishes their public halves, and rotates them.
 *
 * Key lifecycle. Every key is `next`, `current` or `retired`. The `next` key is published before
 * it signs anything, so executors that cached Writ's JWKS already know it when `rotate()` makes it
 * current (jose refetches a key set at most every 30 s by default, which would otherwise reject
 * fresh grants right after a rotation). A retired key stays published until every grant it
 * signed has expired: this instance tracks the latest `exp` it signed per `kid`; with a shared key
 * file, where other instances may have signed with the key until they noticed the rotation, it
 * also stays until `retired_at + max_ttl_s + retired_key_grace_s`.
 *
 * Shared keys. With `key_file`, or with a `KeySetStorage` passed in (the PostgreSQL store keeps the
 * key set in a table), the keys live where several instances share them: each loads every key
 * and publishes all of them, re-reads the set when it changes (checked at most every
 * `reload_interval_s`, from `issue()` and `refresh()`, and in the background with `watch()`), and
 * `rotate()` on any instance is seen by all. Otherwise the keys live in memory only.
 */
import { sign } from "node:crypto";
import { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import { timeOrderedUuid } from "../core/ids.ts";
import { GRANT_TYPE, type GrantClaims } from "../core/types.ts";
import { grantClaimsSchema } from "../executor/schemas.ts";
import {
  type GrantJwk,
  grantAlgorithms,
  type KeyRecord,
  type LoadedKey,
  loadKeys,
  newKey,
  parseKeySet,
  readKeySet,
  serialize,
} from "./key-set.ts";
import { KeyFileStorage, type KeySetStorage } from "./key-storage.ts";

export { type GrantAlgorithm, type GrantJwk, grantAlgorithms } from "./key-set.ts";

export const grantsConfigSchema = z
  .object({
    /** `iss` of every grant; executors are configured with the same value. */
    issuer: z.string().min(1),
    /** JSON key file shared by the instances; omit to keep keys in memory (tests, single process). */
    key_file: z.string().min(1).optional(),
    algorithm: z.enum(grantAlgorithms).default("EdDSA"),
    default_ttl_s: z.number().int().positive().default(60),
    max_ttl_s: z.number().int().positive().max(3600).default(300),
    reload_interval_s: z.number().positive().default(10),
    retired_key_grace_s: z.number().min(0).default(60),
  })
  .strict()
  .refine((config) => config.default_ttl_s <= config.max_ttl_s, {
    message: "default_ttl_s must not exceed max_ttl_s",
    path: ["default_ttl_s"],
  })
  .refine((config) => config.retired_key_grace_s >= config.reload_interval_s, {
    message:
      "retired_key_grace_s must be at least reload_interval_s, so that every instance sees a rotation in time",
    path: ["retired_key_grace_s"],
  });
export type GrantsConfig = z.output<typeof grantsConfigSchema>;
export type GrantsConfigInput = z.input<typeof grantsConfigSchema>;

/** What the caller decides; the signer adds `iss`, `iat`, `nbf`, `exp` and `jti`. */
export type GrantRequest = Omit<GrantClaims, "iss" | "iat" | "nbf" | "exp" | "jti"> & {
  /** Lifetime; defaults to `default_ttl_s` and is capped at `max_ttl_s`. */
  ttlSeconds?: number;
};

export interface IssuedGrant {
  token: string;
  claims: GrantClaims;
}

export interface GrantSignerOptions {
  /** Milliseconds since the epoch; defaults to `Date.now`. */
  clock?: () => number;
  /** Where the shared key set lives; wins over `key_file` (the PostgreSQL store passes its table). */
  storage?: KeySetStorage;
}

/** Grants as the gateway's parts use them (`Gateway.grants`): issued, and their keys published. */
export interface GrantIssuer {
  readonly issuer: string;
  issue(request: GrantRequest): Promise<IssuedGrant>;
  jwks(): { keys: GrantJwk[] };
  /** Reads the key set again now (a rotation by another instance). */
  refresh(): Promise<void>;
  /** Reads the key set again when `kid` is not known yet; whether it is known then. */
  reloadForKid(kid: string): Promise<boolean>;
  /** Signs a document that is not a grant (its own `typ`) with the current grant key. */
  signDocument(typ: string, claims: Record<string, unknown> & { exp: number }): Promise<string>;
}

export class GrantSigner implements GrantIssuer {
  readonly issuer: string;
  readonly #config: GrantsConfig;
  readonly #clock: () => number;
  readonly #latestExp = new Map<string, number>();
  #keys: LoadedKey[];
  readonly #storage: KeySetStorage | undefined;
  #stamp: string | undefined;
  #watch: NodeJS.Timeout | undefined;
  #lastCheck: number;
  #refreshing: Promise<void> | undefined;
  #lastUnknownKidReload = Number.NEGATIVE_INFINITY;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(
    config: GrantsConfig,
    clock: () => number,
    keys: LoadedKey[],
    storage: KeySetStorage | undefined,
    stamp: string | undefined,
  ) {
    this.issuer = config.issuer;
    this.#config = config;
    this.#clock = clock;
    this.#keys = keys;
    this.#storage = storage;
    this.#stamp = stamp;
    this.#lastCheck = clock();
  }

  /** Loads the key file (creating it with a current and a next key when absent), or makes keys in memory. */
  static async create(input: GrantsConfigInput, options: GrantSignerOptions = {}): Promise<GrantSigner> {
    const parsed = grantsConfigSchema.safeParse(input);
    if (!parsed.success) {
      throw new WritError("invalid_argument", "the grants configuration is invalid", {
        suggestedFix: "fix the fields listed in field_errors under grants in the gateway config",
        fieldErrors: fieldErrorsFromZod(parsed.error, "/grants"),
      });
    }
    const config = parsed.data;
    const clock = options.clock ?? Date.now;
    const now = Math.floor(clock() / 1000);
    const storage =
      options.storage ?? (config.key_file === undefined ? undefined : new KeyFileStorage(config.key_file));
    if (storage === undefined) {
      const records = [
        await newKey(config.algorithm, "current", now),
        await newKey(config.algorithm, "next", now),
      ];
      return new GrantSigner(config, clock, loadKeys(records), undefined, undefined);
    }
    let existing = await readKeySet(storage);
    if (existing === undefined) {
      const records = [
        await newKey(config.algorithm, "current", now),
        await newKey(config.algorithm, "next", now),
      ];
      await storage.create(serialize(records));
      // Another instance may have created the key set first: whatever is stored wins.
      existing = await readKeySet(storage);
      if (existing === undefined) {
        throw new WritError("internal", `the ${storage.description} vanished right after it was created`, {
          suggestedFix: "check that nothing else deletes it, then restart",
        });
      }
    }
    return new GrantSigner(config, clock, loadKeys(existing.file.keys), storage, existing.stamp);
  }

  /** The `kid` new grants are signed with. */
  get currentKid(): string {
    return this.#current().record.kid;
  }

  /** Signs a grant. The claims are validated first: an invalid grant is a bug in the caller. */
  async issue(request: GrantRequest): Promise<IssuedGrant> {
    await this.refresh();
    const { ttlSeconds, ...rest } = request;
    if (ttlSeconds !== undefined && (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0)) {
      throw new WritError("internal", `grant ttlSeconds must be a positive integer, got ${ttlSeconds}`, {
        suggestedFix: "fix the policy's grant.ttl_seconds (a positive integer number of seconds)",
      });
    }
    const ttl = Math.min(ttlSeconds ?? this.#config.default_ttl_s, this.#config.max_ttl_s);
    const iat = Math.floor(this.#clock() / 1000);
    const claims = grantClaims(rest, this.issuer, iat, iat + ttl, timeOrderedUuid());
    const key = this.#current();
    const token = signCompactJws(claims, key);
    const kid = key.record.kid;
    this.#latestExp.set(kid, Math.max(this.#latestExp.get(kid) ?? 0, claims.exp));
    return { token, claims };
  }

  /**
   * Signs claims that are not a grant's with the current key, as a compact JWS whose `typ` names
   * what they are (never a grant's: executors refuse any other `typ` as a grant, and a grant is
   * no other document). Writ's MCP endpoint signs its `requestState` so (mcp/request-state.ts):
   * the key set every instance on the store shares, so that any instance verifies what another
   * signed, against `jwks()`. Its key stays published until `exp` (on this instance; with a
   * shared key set, others publish a retired key for `max_ttl_s + retired_key_grace_s` only).
   */
  async signDocument(typ: string, claims: Record<string, unknown> & { exp: number }): Promise<string> {
    if (typ === GRANT_TYPE) {
      throw new WritError("internal", `refused to sign a document typed ${GRANT_TYPE} outside issue()`, {
        suggestedFix: "this is a bug in the caller: grants are signed by issue() only",
      });
    }
    await this.refresh();
    const key = this.#current();
    const kid = key.record.kid;
    this.#latestExp.set(kid, Math.max(this.#latestExp.get(kid) ?? 0, claims.exp));
    return signCompactJws(claims, key, typ);
  }

  /**
   * Makes the pre-published next key current, retires the current one and publishes a new next
   * key. Returns the new current `kid`. With a key file, the rotation is written for every
   * instance to pick up.
   */
  rotate(): Promise<string> {
    return this.#serially(async () => {
      const now = Math.floor(this.#clock() / 1000);
      const storage = this.#storage;
      if (storage === undefined) {
        this.#keys = loadKeys(
          await this.#rotated(
            this.#keys.map((key) => key.record),
            now,
          ),
        );
        return this.#current().record.kid;
      }
      // Read, rotate and write as one step: racing rotations on two instances do not lose a key.
      const stored = await storage.replace(async (current) => {
        const records =
          current === undefined ? this.#keys.map((key) => key.record) : parseKeySet(current, storage).keys;
        return serialize(await this.#rotated(records, now));
      });
      this.#keys = loadKeys(parseKeySet(stored.text, storage).keys);
      this.#stamp = stored.stamp;
      return this.#current().record.kid;
    });
  }

  /** The public keys executors verify grants with: current, next, and retired keys still needed. */
  jwks(): { keys: GrantJwk[] } {
    const now = this.#clock() / 1000;
    const order = { current: 0, next: 1, retired: 2 };
    return {
      keys: this.#keys
        .filter((key) => key.record.status !== "retired" || now < this.#publishUntil(key.record))
        .sort((a, b) => order[a.record.status] - order[b.record.status])
        .map((key) => ({ ...key.publicJwk })),
    };
  }

  /** Re-reads the shared key set now (no-op with keys in memory). */
  reload(): Promise<void> {
    return this.#serially(async () => {
      const storage = this.#storage;
      if (storage === undefined) return;
      const loaded = await readKeySet(storage);
      if (loaded === undefined) {
        throw new WritError("internal", `the ${storage.description} is gone`, {
          suggestedFix:
            "restore it from backup; deleting it makes new keys and the grants signed by the old ones stop verifying",
        });
      }
      this.#keys = loadKeys(loaded.file.keys);
      this.#stamp = loaded.stamp;
    });
  }

  /**
   * A grant names a key this instance does not hold: another instance may have rotated since the
   * last check. Re-reads the shared key set at once (at most once a second, so made-up key ids
   * cannot hammer the store); true when the key is known afterwards.
   */
  async reloadForKid(kid: string): Promise<boolean> {
    const known = () => this.#keys.some((key) => key.publicJwk.kid === kid);
    if (known() || this.#storage === undefined) return known();
    const now = this.#clock();
    if (now - this.#lastUnknownKidReload < 1000) return false;
    this.#lastUnknownKidReload = now;
    await this.reload();
    return known();
  }

  /** Re-reads the key set if another instance changed it; checks at most every `reload_interval_s`. */
  async refresh(): Promise<void> {
    const storage = this.#storage;
    if (storage === undefined) return;
    const now = this.#clock();
    if (this.#refreshing === undefined && now - this.#lastCheck >= this.#config.reload_interval_s * 1000) {
      this.#lastCheck = now;
      this.#refreshing = (async () => {
        const stamp = await storage.stamp();
        if (stamp === undefined || stamp !== this.#stamp) await this.reload();
      })().finally(() => {
        this.#refreshing = undefined;
      });
    }
    await this.#refreshing;
  }

  /**
   * Checks for another instance's rotation every `reload_interval_s` in the background too, so an
   * instance that only verifies grants (and never signs one) still learns new keys. Failures are
   * reported to `onError` and retried at the next interval; the last loaded keys stay in use.
   */
  watch(onError: (error: unknown) => void = () => {}): void {
    if (this.#storage === undefined || this.#watch !== undefined) return;
    this.#watch = setInterval(() => {
      this.refresh().catch(onError);
    }, this.#config.reload_interval_s * 1000);
    this.#watch.unref();
  }

  /** Stops `watch()`. */
  unwatch(): void {
    clearInterval(this.#watch);
    this.#watch = undefined;
  }

  async #rotated(records: readonly KeyRecord[], now: number): Promise<KeyRecord[]> {
    const next = records.find((key) => key.status === "next");
    const rotated: KeyRecord[] = [];
    for (const key of records) {
      if (key.status === "current") rotated.push({ ...key, status: "retired", retired_at: now });
      else if (key.status === "next") rotated.push({ ...key, status: "current" });
      else if (now < this.#publishUntil(key)) rotated.push(key);
    }
    if (next === undefined) rotated.push(await newKey(this.#config.algorithm, "current", now));
    rotated.push(await newKey(this.#config.algorithm, "next", now));
    return rotated;
  }

  #current(): LoadedKey {
    const current = this.#keys.find((key) => key.record.status === "current");
    if (current === undefined) throw new Error("grant signer invariant broken: no current key");
    return current;
  }

  /** Until when (seconds) a retired key must stay published. */
  #publishUntil(record: KeyRecord): number {
    const signedHere = this.#latestExp.get(record.kid) ?? Number.NEGATIVE_INFINITY;
    if (this.#storage === undefined || record.retired_at === undefined) return signedHere;
    const signedElsewhere = record.retired_at + this.#config.max_ttl_s + this.#config.retired_key_grace_s;
    return Math.max(signedHere, signedElsewhere);
  }

  #serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}

/**
 * The claims of a grant, as `grantClaimsSchema` makes them (its key order, unknown claims
 * dropped), checked. Writ builds every part, so the common case is checked by hand: claims that
 * pass these checks pass the schema and come out the same. Anything else, and conditions (rare;
 * they have their own schema), goes through the schema, with its exact result or error.
 */
function grantClaims(
  request: Omit<GrantRequest, "ttlSeconds">,
  iss: string,
  iat: number,
  exp: number,
  jti: string,
): GrantClaims {
  const { act, res } = request;
  if (
    request.cnd.length === 0 &&
    nonEmpty(iss) &&
    nonEmpty(request.aud) &&
    nonEmpty(request.sub) &&
    nonEmpty(request.tnt) &&
    nonEmpty(jti) &&
    Number.isSafeInteger(iat) &&
    Number.isSafeInteger(exp) &&
    nonEmpty(act.name) &&
    typeof act.version === "string" &&
    nonEmpty(res.type) &&
    typeof res.id === "string" &&
    (res.rev === undefined || typeof res.rev === "string") &&
    (res.type === "none") === (res.id === "") &&
    typeof request.args === "string" &&
    SHA256_HEX.test(request.args) &&
    typeof request.dec === "string" &&
    typeof request.pol === "string" &&
    Number.isSafeInteger(request.max) &&
    request.max > 0
  ) {
    return {
      iss,
      aud: request.aud,
      sub: request.sub,
      tnt: request.tnt,
      jti,
      iat,
      nbf: iat,
      exp,
      act: { name: act.name, version: act.version },
      // The schema keeps a `rev` key that is there, even undefined (JSON leaves it out).
      res: "rev" in res ? { type: res.type, id: res.id, rev: res.rev } : { type: res.type, id: res.id },
      args: request.args,
      cnd: [],
      dec: request.dec,
      pol: request.pol,
      max: request.max,
    };
  }
  const parsed = grantClaimsSchema.safeParse({ ...request, iss, iat, nbf: iat, exp, jti });
  if (!parsed.success) {
    throw new WritError("internal", "refused to sign a grant with invalid claims", {
      suggestedFix: "this is a bug in the component that requested the grant; see field_errors",
      fieldErrors: fieldErrorsFromZod(parsed.error),
    });
  }
  return parsed.data;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

function nonEmpty(value: unknown): boolean {
  return typeof value === "string" && value.length > 0;
}

/** The encoded JWS header of each key's grants (constant per key). */
const encodedHeaders = new WeakMap<LoadedKey, string>();

/**
 * A JWS in compact serialization (RFC 7515), signed with node:crypto: EdDSA over the signing
 * input, ES256 as the raw r||s pair JWS requires. Executors verify these with jose.
 */
function signCompactJws(claims: object, key: LoadedKey, typ: string = GRANT_TYPE): string {
  let header = typ === GRANT_TYPE ? encodedHeaders.get(key) : undefined;
  if (header === undefined) {
    header = base64urlJson({ alg: key.record.alg, kid: key.record.kid, typ });
    if (typ === GRANT_TYPE) encodedHeaders.set(key, header);
  }
  const input = `${header}.${base64urlJson(claims)}`;
  const signature =
    key.record.alg === "EdDSA"
      ? sign(null, Buffer.from(input), key.privateKey)
      : sign("sha256", Buffer.from(input), { key: key.privateKey, dsaEncoding: "ieee-p1363" });
  return `${input}.${signature.toString("base64url")}`;
}

function base64urlJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

/**
 * The grant key set: the records of every key (private JWK, `kid`, status), as stored in the key
 * file or the PostgreSQL table, their validation, and the keys loaded for signing.
 */
import { createPrivateKey, type KeyObject } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from "jose";
import { z } from "zod";
import { fieldErrorsFromZod, WritError } from "../core/errors.ts";
import type { KeySetStorage } from "./key-storage.ts";

export const grantAlgorithms = ["EdDSA", "ES256"] as const;
export type GrantAlgorithm = (typeof grantAlgorithms)[number];

/** A published verification key. */
export interface GrantJwk {
  kty: string;
  crv: string;
  x: string;
  y?: string;
  kid: string;
  alg: GrantAlgorithm;
  use: "sig";
}

const b64url = z.string().regex(/^[A-Za-z0-9_-]+$/);
const privateJwkSchema = z.union([
  z.object({ kty: z.literal("OKP"), crv: z.literal("Ed25519"), x: b64url, d: b64url }).strict(),
  z.object({ kty: z.literal("EC"), crv: z.literal("P-256"), x: b64url, y: b64url, d: b64url }).strict(),
]);
const keyRecordSchema = z
  .object({
    kid: z.string().min(1),
    alg: z.enum(grantAlgorithms),
    status: z.enum(["next", "current", "retired"]),
    /** Seconds since the epoch. */
    created_at: z.number().int(),
    retired_at: z.number().int().optional(),
    private_jwk: privateJwkSchema,
  })
  .strict()
  .refine((key) => (key.alg === "EdDSA") === (key.private_jwk.kty === "OKP"), {
    message: "alg does not match the key type (EdDSA needs an OKP Ed25519 key, ES256 an EC P-256 key)",
  })
  .refine((key) => (key.status === "retired") === (key.retired_at !== undefined), {
    message: "retired_at is required on retired keys and only on them",
  });
export type KeyRecord = z.output<typeof keyRecordSchema>;

const keyFileSchema = z
  .object({ version: z.literal(1), keys: z.array(keyRecordSchema).min(1) })
  .strict()
  .superRefine((file, context) => {
    const count = (status: KeyRecord["status"]) => file.keys.filter((key) => key.status === status).length;
    if (count("current") !== 1)
      context.addIssue({ code: "custom", message: "exactly one key must be current" });
    if (count("next") > 1) context.addIssue({ code: "custom", message: "at most one key may be next" });
    if (new Set(file.keys.map((key) => key.kid)).size !== file.keys.length) {
      context.addIssue({ code: "custom", message: "kids must be unique" });
    }
  });
export type KeyFile = z.output<typeof keyFileSchema>;

export interface LoadedKey {
  record: KeyRecord;
  /** node:crypto's key: signing with it is synchronous (WebCrypto's queues on the thread pool). */
  privateKey: KeyObject;
  publicJwk: Readonly<GrantJwk>;
}

export async function newKey(
  alg: GrantAlgorithm,
  status: "current" | "next",
  now: number,
): Promise<KeyRecord> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const privateJwk = privateJwkSchema.parse(await exportJWK(privateKey));
  const kid = await calculateJwkThumbprint(publicPart(privateJwk));
  return { kid, alg, status, created_at: now, private_jwk: privateJwk };
}

function publicPart(jwk: z.output<typeof privateJwkSchema>): {
  kty: string;
  crv: string;
  x: string;
  y?: string;
} {
  return jwk.kty === "OKP"
    ? { kty: jwk.kty, crv: jwk.crv, x: jwk.x }
    : { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
}

export function loadKeys(records: readonly KeyRecord[]): LoadedKey[] {
  return records.map((record) => ({
    record,
    privateKey: createPrivateKey({ key: record.private_jwk, format: "jwk" }),
    publicJwk: Object.freeze({
      ...publicPart(record.private_jwk),
      kid: record.kid,
      alg: record.alg,
      use: "sig" as const,
    }),
  }));
}

export function serialize(keys: readonly KeyRecord[]): string {
  const file: KeyFile = { version: 1, keys: [...keys] };
  return `${JSON.stringify(file, null, 2)}\n`;
}

export async function readKeySet(
  storage: KeySetStorage,
): Promise<{ file: KeyFile; stamp: string } | undefined> {
  const read = await storage.read();
  return read === undefined ? undefined : { file: parseKeySet(read.text, storage), stamp: read.stamp };
}

export function parseKeySet(text: string, storage: KeySetStorage): KeyFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new WritError("internal", `the ${storage.description} is not valid JSON`, {
      suggestedFix:
        "restore it from backup (deleting it makes new keys; grants signed by the old ones stop verifying)",
      cause: error,
    });
  }
  const parsed = keyFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new WritError("internal", `the ${storage.description} is not a valid Writ key file`, {
      suggestedFix:
        "restore it from backup (deleting it makes new keys; grants signed by the old ones stop verifying)",
      fieldErrors: fieldErrorsFromZod(parsed.error),
    });
  }
  return parsed.data;
}

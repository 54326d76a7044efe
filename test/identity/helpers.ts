import { createServer, type Server } from "node:http";
import {
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  type JWTPayload,
  SignJWT,
} from "jose";

/** The public members of a test key, as an issuer would publish them. */
export interface PublicJwk {
  kty: string;
  kid: string;
  alg: string;
  use: "sig";
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
}

export interface TestKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicJwk: PublicJwk;
}

export async function makeKey(alg: "EdDSA" | "ES256" | "RS256" = "EdDSA", kid?: string): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const { kty, crv, x, y, n, e } = await exportJWK(publicKey);
  if (kty === undefined) throw new Error("exported key has no kty");
  const id = kid ?? (await calculateJwkThumbprint({ kty, crv, x, y, n, e }));
  return { kid: id, alg, privateKey, publicJwk: { kty, crv, x, y, n, e, kid: id, alg, use: "sig" } };
}

export function jwksOf(...keys: TestKey[]): { keys: PublicJwk[] } {
  return { keys: keys.map((key) => key.publicJwk) };
}

export const now = () => Math.floor(Date.now() / 1000);

/** A token signed by `key`; `claims` override the defaults (iss, aud, sub, exp in an hour). */
export async function sign(
  key: TestKey,
  claims: JWTPayload = {},
  header: { kid?: string | null; typ?: string } = {},
): Promise<string> {
  const payload: JWTPayload = {
    iss: "https://idp.test",
    aud: "writ",
    sub: "alice",
    iat: now(),
    exp: now() + 3600,
    ...claims,
  };
  const kid = header.kid === null ? undefined : (header.kid ?? key.kid);
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, kid, typ: header.typ ?? "JWT" })
    .sign(key.privateKey);
}

export function b64(json: unknown): string {
  return Buffer.from(JSON.stringify(json)).toString("base64url");
}

/** A JWKS endpoint on 127.0.0.1 whose key set the test can replace. */
export interface JwksServer {
  url: string;
  requests: number;
  serve(jwks: unknown): void;
  /** Answer with this status instead of the key set. */
  fail(status: number | undefined): void;
  close(): Promise<void>;
}

export async function startJwksServer(initial: unknown): Promise<JwksServer> {
  let body = JSON.stringify(initial);
  let failStatus: number | undefined;
  const state = { requests: 0 };
  const server: Server = createServer((_request, response) => {
    state.requests += 1;
    if (failStatus !== undefined) {
      response.writeHead(failStatus).end();
      return;
    }
    response.writeHead(200, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the JWKS server has no TCP address");
  return {
    url: `http://127.0.0.1:${address.port}/.well-known/jwks.json`,
    get requests() {
      return state.requests;
    },
    serve(jwks) {
      body = JSON.stringify(jwks);
    },
    fail(status) {
      failStatus = status;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

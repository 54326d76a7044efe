/**
 * Backend credentials (DESIGN section 1, stage 8): the `credentials:` section of the gateway
 * config names where each secret lives (an environment variable or a file), and
 * `CredentialResolver` turns a contract's `credentials_ref` into request headers at dispatch time.
 * Secrets are read when a call is dispatched (a file is re-read when it changes), and never appear
 * in a log line, an error message or anything returned to a caller or model.
 */
import { readFile, stat } from "node:fs/promises";
import { z } from "zod";
import { WritError } from "../core/errors.ts";

const headerNameSchema = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { error: "must be an HTTP header name" })
  .describe("Header the credential is sent in (default authorization)");

const schemeSchema = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { error: "must be an HTTP authentication scheme such as Bearer" })
  .describe("Prefix of the header value, e.g. Bearer (default Bearer in authorization, none elsewhere)");

export const credentialSourceSchema = z
  .discriminatedUnion("from", [
    z
      .strictObject({
        from: z.literal("env"),
        env: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: "must be an environment variable name" })
          .describe("Environment variable holding the secret"),
        header: headerNameSchema.optional(),
        scheme: schemeSchema.optional(),
      })
      .describe("A secret read from an environment variable"),
    z
      .strictObject({
        from: z.literal("file"),
        path: z.string().min(1).describe("File holding the secret (surrounding whitespace is ignored)"),
        header: headerNameSchema.optional(),
        scheme: schemeSchema.optional(),
      })
      .describe("A secret read from a file, re-read when it changes"),
  ])
  .describe("Where one backend credential comes from");

export const credentialsConfigSchema = z
  .record(z.string().min(1), credentialSourceSchema)
  .default({})
  .describe("Backend credentials by name; a contract's backend.credentials_ref names one");

export type CredentialSource = z.output<typeof credentialSourceSchema>;
export type CredentialsConfig = z.output<typeof credentialsConfigSchema>;
export type CredentialsConfigInput = z.input<typeof credentialsConfigSchema>;

export interface CredentialResolverOptions {
  /** Environment to read `from: env` secrets from (default `process.env`), read at each resolve. */
  env?: Record<string, string | undefined>;
}

interface FileCacheEntry {
  stamp: string;
  secret: string;
}

/** Backend credentials as dispatch reads them (`Gateway.credentials`). */
export interface BackendCredentials {
  /** The headers of credentials `ref` (read now; throws a `WritError` when unavailable). */
  resolve(ref: string): Promise<Record<string, string>>;
}

export class CredentialResolver implements BackendCredentials {
  readonly #config: CredentialsConfig;
  readonly #env: Record<string, string | undefined>;
  readonly #files = new Map<string, FileCacheEntry>();

  constructor(config: CredentialsConfigInput = {}, options: CredentialResolverOptions = {}) {
    this.#config = credentialsConfigSchema.parse(config);
    this.#env = options.env ?? process.env;
  }

  /** The configured credential names (never their values). */
  names(): string[] {
    return Object.keys(this.#config);
  }

  has(ref: string): boolean {
    return Object.hasOwn(this.#config, ref);
  }

  /** The headers carrying credential `ref`, read now. */
  async resolve(ref: string): Promise<Record<string, string>> {
    const source = Object.hasOwn(this.#config, ref) ? this.#config[ref] : undefined;
    if (source === undefined) {
      throw unavailable(
        ref,
        `backend credentials ${JSON.stringify(ref)} are not configured`,
        `add ${JSON.stringify(ref)} under credentials: in the gateway config, or fix the contract's credentials_ref`,
      );
    }
    const secret =
      source.from === "env" ? this.#fromEnv(ref, source.env) : await this.#fromFile(ref, source.path);
    if (/[\r\n\0]/.test(secret)) {
      throw unavailable(
        ref,
        `backend credentials ${JSON.stringify(ref)} contain a line break or NUL and cannot be sent in a header`,
        "store the secret on a single line",
      );
    }
    const header = (source.header ?? "authorization").toLowerCase();
    const scheme = source.scheme ?? (header === "authorization" ? "Bearer" : undefined);
    return { [header]: scheme === undefined ? secret : `${scheme} ${secret}` };
  }

  #fromEnv(ref: string, name: string): string {
    const value = this.#env[name]?.trim();
    if (value === undefined || value === "") {
      throw unavailable(
        ref,
        `backend credentials ${JSON.stringify(ref)}: environment variable ${name} is not set or empty`,
        `set ${name} in the gateway's environment`,
      );
    }
    return value;
  }

  async #fromFile(ref: string, path: string): Promise<string> {
    let stamp: string;
    try {
      const info = await stat(path);
      stamp = `${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
    } catch (error) {
      throw unreadable(ref, path, error);
    }
    const cached = this.#files.get(path);
    if (cached !== undefined && cached.stamp === stamp) return cached.secret;
    let secret: string;
    try {
      secret = (await readFile(path, "utf8")).trim();
    } catch (error) {
      throw unreadable(ref, path, error);
    }
    if (secret === "") {
      throw unavailable(
        ref,
        `backend credentials ${JSON.stringify(ref)}: file ${path} is empty`,
        `write the secret to ${path}`,
      );
    }
    this.#files.set(path, { stamp, secret });
    return secret;
  }
}

function unreadable(ref: string, path: string, error: unknown): WritError {
  const code =
    typeof error === "object" && error !== null && typeof Reflect.get(error, "code") === "string"
      ? ` (${String(Reflect.get(error, "code"))})`
      : "";
  return unavailable(
    ref,
    `backend credentials ${JSON.stringify(ref)}: file ${path} cannot be read${code}`,
    `check that ${path} exists and is readable by the gateway`,
  );
}

/**
 * Credentials that cannot be sent. The caller learns only that and that nothing was sent: where
 * the secret lives (a file path, a variable name) is the operator's business, written to the
 * server's log with what to fix.
 */
function unavailable(ref: string, detail: string, operatorFix: string): WritError {
  console.error(`credentials: ${detail}; ${operatorFix}`);
  return new WritError(
    "backend_unavailable",
    `the backend credentials ${JSON.stringify(ref)} are unavailable, so nothing was sent`,
    {
      suggestedFix: "retry later; if it persists, tell the operator (the server's log says what to fix)",
      retryable: false,
      effectCommitted: false,
      cause: new Error(`${detail}; ${operatorFix}`),
    },
  );
}

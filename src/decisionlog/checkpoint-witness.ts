/**
 * External witnesses of the decision log's checkpoints: somewhere outside the store, so that an
 * attacker who can rewrite the store (entries and checkpoints alike) still cannot hide a cut.
 *
 * The protocol (docs: README "Decision log checkpoints"):
 * - a witness file is append-only NDJSON: one line per checkpoint,
 *   `{"seq":…,"hash":"…","time":"…","kid":"…","jws":"…"}`;
 * - a witness URL receives each checkpoint as `POST <url>` with that object as its JSON body
 *   (2xx: kept), and answers `GET <url>` with every checkpoint it kept, as the same NDJSON.
 * Only `jws` is trusted when verifying: the other fields are for people reading the file.
 */
import { open, readFile } from "node:fs/promises";
import { z } from "zod";
import { errorMessage, WritError } from "../core/errors.ts";
import type { StoredCheckpoint } from "../store/types.ts";

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * https, or http to this machine only (a witness or a decision-log service across a network must
 * be authenticated by TLS).
 */
export const witnessUrlSchema = z.url().refine(
  (text) => {
    const url = new URL(text);
    return url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname));
  },
  { message: "expected an https:// URL (http:// only to 127.0.0.1, [::1] or localhost)" },
);

/** `decision_log.witness` in the gateway configuration. */
export const witnessConfigSchema = z.union([
  z.object({ file: z.string().min(1) }).strict(),
  z
    .object({
      url: witnessUrlSchema,
      /** Credentials (a name under `credentials:`) sent with each POST. */
      credentials_ref: z.string().min(1).optional(),
      timeout_ms: z.number().int().positive().default(5000),
    })
    .strict(),
]);
export type WitnessConfig = z.output<typeof witnessConfigSchema>;

/** Where checkpoints are shipped. */
export interface Witness {
  /** For messages, e.g. "witness file /var/lib/writ/witness.ndjson". */
  readonly description: string;
  ship(checkpoint: StoredCheckpoint): Promise<void>;
}

/** The line a witness keeps for a checkpoint. */
export function witnessLine(checkpoint: StoredCheckpoint): string {
  const { seq, hash, time, kid, jws } = checkpoint;
  return JSON.stringify({ seq, hash, time, kid, jws });
}

/** The witness a configuration names; `headers` resolves a `credentials_ref` to its headers. */
export function witnessOf(
  config: WitnessConfig,
  headers: (ref: string) => Promise<Record<string, string>>,
): Witness {
  if ("file" in config) {
    const file = config.file;
    return {
      description: `witness file ${file}`,
      async ship(checkpoint) {
        // O_APPEND: a whole line at the end, synced before the checkpoint counts as shipped.
        const handle = await open(file, "a", 0o644);
        try {
          await handle.writeFile(`${witnessLine(checkpoint)}\n`, "utf8");
          await handle.sync();
        } finally {
          await handle.close();
        }
      },
    };
  }
  const { url, credentials_ref: ref, timeout_ms: timeoutMs } = config;
  return {
    description: `witness ${url}`,
    async ship(checkpoint) {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(ref === undefined ? {} : await headers(ref)) },
        body: witnessLine(checkpoint),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: "error",
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`it answered HTTP ${response.status}`);
    },
  };
}

/** One line of a witness as read back: its JWS, or why the line is unusable. */
export type WitnessItem = { line: number; jws: string } | { line: number; problem: string };

const lineSchema = z.object({ jws: z.string().min(1) });

/**
 * The checkpoints a witness holds: `source` is a witness file or an http(s) URL answering GET
 * with NDJSON. A missing or unreachable witness is an error (exit 3 in the CLI): it proves nothing.
 */
export async function readWitness(source: string, timeoutMs = 10_000): Promise<WitnessItem[]> {
  let text: string;
  try {
    if (/^https?:\/\//i.test(source)) {
      const response = await fetch(source, {
        headers: { accept: "application/x-ndjson" },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) throw new Error(`it answered HTTP ${response.status}`);
      text = await response.text();
    } else {
      text = await readFile(source, "utf8");
    }
  } catch (error) {
    throw new WritError("backend_unavailable", `cannot read the witness ${source}: ${errorMessage(error)}`, {
      retryable: true,
      suggestedFix:
        "pass --witness the witness file or the URL checkpoints are shipped to (decision_log.witness)",
      cause: error,
    });
  }
  return text.split("\n").flatMap((raw, index): WitnessItem[] => {
    if (raw.trim() === "") return [];
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      json = undefined;
    }
    const parsed = lineSchema.safeParse(json);
    return [
      parsed.success
        ? { line: index + 1, jws: parsed.data.jws }
        : { line: index + 1, problem: "not a JSON object with a jws string" },
    ];
  });
}

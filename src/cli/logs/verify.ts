/**
 * `writ logs verify`: walks the hash chain from the first entry, then checks it against the
 * signed checkpoints of its head (the store's, and a witness's with `--witness`). Exit code 0
 * only when the chain is intact and every checkpoint verifies and matches it, 1 naming the first
 * broken entry or each checkpoint that disagrees, 3 when the log or a witness cannot be read.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { errorMessage, WritError } from "../../core/errors.ts";

import {
  type CheckpointJwks,
  CheckpointKeys,
  type CheckpointReport,
  type CheckpointSource,
  checkCheckpoints,
  checkpointKeyFile,
  readWitness,
  storeCheckpoints,
} from "../../decisionlog/index.ts";
import { grantAlgorithms } from "../../grants/key-set.ts";
import { configOption, EXIT, type OpenLog, parseFlags, UsageError, withLog } from "./common.ts";
import type { CommandIo } from "./io.ts";
import { checkpointSummary, verifySummary } from "./render.ts";

export const verifyUsage = `usage: writ logs verify [--config f] [--format text|json] [--witness <file|url>]… [--keys <file|url>]

Checks every entry of the decision log: seqs run 1, 2, 3… without gaps, each entry links to the
previous entry's hash, and each hash matches the entry. Then checks the signed checkpoints of the
log's head kept in the store, and with --witness those a witness kept (its NDJSON file, or the URL
checkpoints are shipped to, read with GET): each must verify with the checkpoint keys, and the log
must reach its seq with the same hash there. A log cut back behind Writ's back ends before them.

  --witness <file|url>  also check a witness's checkpoints (repeatable)
  --keys <file|url>     the checkpoint keys (a JWKS, e.g. https://writ.example/.well-known/writ-checkpoint-keys.json);
                        default: the key set the gateway keeps (decision_log.checkpoints.key_file, or the store)

Exit codes: 0 intact, 1 broken (the first broken entry or each disagreeing checkpoint is named),
2 usage, 3 cannot read the log, the keys or a witness.`;

const formatSchema = z.enum(["text", "json"]).default("text");

const publishedJwkSchema = z.object({
  kty: z.string(),
  crv: z.string(),
  x: z.string(),
  y: z.string().optional(),
  kid: z.string().min(1),
  alg: z.enum(grantAlgorithms),
  use: z.literal("sig").default("sig"),
});
const jwksSchema = z.object({ keys: z.array(publishedJwkSchema) });

export async function verifyCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseFlags(argv, {
    ...configOption,
    format: { type: "string" },
    witness: { type: "string", multiple: true },
    keys: { type: "string" },
  });
  if (values.help) {
    await io.out(verifyUsage);
    return EXIT.ok;
  }
  const format = formatSchema.safeParse(values.format);
  if (!format.success) throw new UsageError("--format is text or json");
  return withLog(values.config, async (opened) => {
    const result = await opened.log.verify();
    if (!result.ok) {
      await io.out(format.data === "json" ? JSON.stringify(result) : verifySummary(result));
      io.err(
        `writ logs verify: the decision log is not trustworthy from seq ${result.first_broken.seq} on\n  next: compare with a backup or an exported copy (writ logs export) to see what changed, and restore the store from the backup`,
      );
      return EXIT.failed;
    }
    const keys = await checkpointKeys(opened, values.keys);
    const report = await checkCheckpoints(
      opened.store,
      { seq: result.entries, hash: result.head_hash },
      keys,
      sources(opened, values.witness ?? []),
    );
    await io.out(
      format.data === "json"
        ? JSON.stringify({ ...result, ok: report.problems.length === 0, checkpoints: report })
        : `${verifySummary(result, report.problems.length > 0)}\n${checkpointSummary(report)}`,
    );
    if (report.problems.length > 0) {
      io.err(checkpointAdvice(report, result.entries));
      return EXIT.failed;
    }
    if (result.entries === 0) {
      io.err(
        "writ logs verify: the log is empty\n  next: check that --config names the store the gateway writes",
      );
    }
    return EXIT.ok;
  });
}

async function* sources(opened: OpenLog, witnesses: string[]): AsyncGenerator<CheckpointSource> {
  yield* storeCheckpoints(opened.store);
  for (const source of witnesses) {
    for (const item of await readWitness(source)) yield { kind: "witness", source, item };
  }
}

/** The keys checkpoints are verified with: `--keys`, else the key set the gateway keeps. */
async function checkpointKeys(
  opened: OpenLog,
  source: string | undefined,
): Promise<CheckpointJwks | undefined> {
  if (source === undefined) {
    const file = opened.config.decision_log.checkpoints.key_file;
    return CheckpointKeys.published(
      file === undefined ? opened.store.checkpointKeySet() : checkpointKeyFile(file),
    );
  }
  let json: unknown;
  try {
    const text = /^https?:\/\//i.test(source)
      ? await (async () => {
          const response = await fetch(source, { signal: AbortSignal.timeout(10_000) });
          if (!response.ok) throw new Error(`it answered HTTP ${response.status}`);
          return response.text();
        })()
      : await readFile(source, "utf8");
    json = JSON.parse(text);
  } catch (error) {
    throw new WritError(
      "backend_unavailable",
      `cannot read the checkpoint keys ${source}: ${errorMessage(error)}`,
      {
        suggestedFix: "pass --keys a JWKS file or the gateway's /.well-known/writ-checkpoint-keys.json",
        cause: error,
      },
    );
  }
  const parsed = jwksSchema.safeParse(json);
  if (!parsed.success) {
    throw new WritError("backend_unavailable", `${source} is not a JWKS of checkpoint keys`, {
      suggestedFix: "pass --keys a JWKS file or the gateway's /.well-known/writ-checkpoint-keys.json",
    });
  }
  return { keys: parsed.data.keys.map(({ y, ...key }) => (y === undefined ? key : { ...key, y })) };
}

function checkpointAdvice(report: CheckpointReport, entries: number): string {
  const cut = report.problems.find((p) => p.reason === "log_ends_before");
  const what = cut
    ? `the decision log ends at seq ${entries}, before its checkpoint of seq ${cut.seq}: entries were deleted from its end`
    : `${report.problems.length} checkpoint(s) do not verify or do not match the log`;
  return `writ logs verify: ${what}\n  next: restore the store from a backup (or compare with a witness and an exported copy); a checkpoint with a bad signature was forged or altered: find who can write the store`;
}

/**
 * A cache of compiled policies, so that a start (or a restart) does not compile Rego it compiled
 * before. An entry is keyed by a digest of everything the compiler's output depends on: the
 * compiler itself (its fingerprint: its own code, the code it imports from `core/`, and the
 * installed binaryen's version), the entrypoint, and each source's name and text. Data files are not
 * compiled into the module (they are loaded beside it), so they are not part of the key.
 *
 * Entries are looked up in the folders shipped with the package first (`npm run build`
 * precompiles the sample policies into `dist/policy/compiled/`, valid for that build only), then
 * in a writable folder (under the SQLite store's folder). An entry that does not read back
 * whole (unreadable, not the format, another key, a wasm whose digest differs) is a miss: the
 * policy is compiled again, never served from a doubtful entry.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { RegoSource } from "../rego/build.ts";

/** The fingerprint `npm run build` writes beside the compiled compiler (dist/rego/). */
export const FINGERPRINT_FILE = "compiler-fingerprint.txt";
/** The folder of precompiled entries that ships with the package (dist/policy/compiled/). */
export const shippedCacheDir = fileURLToPath(new URL("./compiled", import.meta.url));

const regoDir = fileURLToPath(new URL("../rego", import.meta.url));
const coreDir = fileURLToPath(new URL("../core", import.meta.url));

/**
 * Entries kept in the writable folder: a policy edited under `watch` writes one per save, and
 * only the latest few can be asked for again.
 */
export const KEPT_ENTRIES = 16;

/** Bumped when the entry format or the key's recipe changes. */
const FORMAT = 1;

const entrySchema = z.object({
  format: z.literal(FORMAT),
  key: z.string(),
  hostBuiltins: z.array(z.string()),
  wasm_sha256: z.string(),
  wasm: z.string(),
});

export interface CompiledEntry {
  wasm: Uint8Array;
  hostBuiltins: string[];
}

const sha256 = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");

/**
 * A digest of the compiler's code as it runs here: every file below `rego/` and `core/` (the
 * compiler imports a few `core/` helpers). From sources (a checkout) any edit of `src/rego`
 * changes it; the build writes it for `dist/` (FINGERPRINT_FILE).
 */
export async function compilerCodeDigest(dirs = [regoDir, coreDir]): Promise<string> {
  const hash = createHash("sha256");
  for (const dir of dirs) {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    const files = entries
      .filter((e) => e.isFile() && e.name !== FINGERPRINT_FILE)
      .map((e) => path.join(e.parentPath, e.name))
      .sort();
    for (const file of files) {
      hash
        .update(path.relative(dir, file))
        .update("\0")
        .update(await readFile(file))
        .update("\0");
    }
  }
  return hash.digest("hex");
}

/** The installed binaryen's version: its optimizer shapes the output, and npm may install another. */
function binaryenVersion(): string {
  const pkg: unknown = createRequire(import.meta.url)("binaryen/package.json");
  const parsed = z.object({ version: z.string() }).safeParse(pkg);
  return parsed.success ? parsed.data.version : "unknown";
}

let fingerprint: Promise<string> | undefined;

/**
 * The compiler's fingerprint: its code's digest (the one the build wrote, else computed once per
 * process) and the version of the binaryen it would run with.
 */
export function compilerFingerprint(): Promise<string> {
  fingerprint ??= readFile(path.join(regoDir, FINGERPRINT_FILE), "utf8")
    .then(
      (text) => text.trim(),
      () => compilerCodeDigest(),
    )
    .then((code) => `${code} binaryen ${binaryenVersion()}`);
  return fingerprint;
}

export function cacheKey(
  compiler: string,
  entrypoint: string,
  sources: readonly RegoSource[],
  customBuiltins = "",
  strictBuiltinErrors = false,
): string {
  // A strict build is another module; a lax one keeps the keys it always had.
  const variant = strictBuiltinErrors ? "strict-builtin-errors\0" : "";
  const hash = createHash("sha256").update(
    `writ compiled policy ${FORMAT}\0${compiler}\0${entrypoint}\0${variant}`,
  );
  // The declarations of custom builtins decide how calls compile; none leaves older keys as they were.
  if (customBuiltins !== "") hash.update(`builtins:${customBuiltins.length}:${customBuiltins}\0`);
  for (const s of sources) {
    hash.update(`${s.file.length}:${s.file}${s.source.length}:${s.source}`);
    // A Rego v0 source may compile differently from the same text in v1.
    if (s.regoVersion === 0) hash.update("v0");
  }
  return hash.digest("hex");
}

export interface CompiledCacheOptions {
  /** Folders of entries read but never written (the package's precompiled sample policies). */
  readDirs?: readonly string[];
  /** The folder new entries are written to (and read from), if any. */
  writeDir?: string;
  /** The compiler's fingerprint; `compilerFingerprint()` when omitted (tests set their own). */
  fingerprint?: () => Promise<string>;
}

/**
 * The cache of a gateway (or a command) on a store: the shipped entries, and a writable folder
 * beside a SQLite file (`policy-cache/`), so that a restart does not compile again. None for
 * PostgreSQL (undefined) or an in-memory database.
 */
export function compiledCacheBeside(sqliteFile: string | undefined): CompiledPolicyCache {
  return sqliteFile === undefined || sqliteFile === ":memory:"
    ? new CompiledPolicyCache()
    : new CompiledPolicyCache({ writeDir: path.join(path.dirname(sqliteFile), "policy-cache") });
}

export class CompiledPolicyCache {
  private readonly readDirs: readonly string[];
  private readonly writeDir: string | undefined;
  private readonly fingerprint: () => Promise<string>;

  constructor(options: CompiledCacheOptions = {}) {
    this.readDirs = options.readDirs ?? [shippedCacheDir];
    this.writeDir = options.writeDir;
    this.fingerprint = options.fingerprint ?? compilerFingerprint;
  }

  /** Whether any folder could hold an entry (else the fingerprint is not even computed). */
  get enabled(): boolean {
    return this.writeDir !== undefined || this.readDirs.some((dir) => existsSync(dir));
  }

  async key(
    entrypoint: string,
    sources: readonly RegoSource[],
    customBuiltins = "",
    strictBuiltinErrors = false,
  ): Promise<string> {
    return cacheKey(await this.fingerprint(), entrypoint, sources, customBuiltins, strictBuiltinErrors);
  }

  /** The entry for `key`, or undefined when no folder holds a whole one. */
  async get(key: string): Promise<CompiledEntry | undefined> {
    for (const dir of [...this.readDirs, ...(this.writeDir === undefined ? [] : [this.writeDir])]) {
      const entry = await readEntry(path.join(dir, `${key}.json`), key);
      if (entry !== undefined) return entry;
    }
    return undefined;
  }

  /**
   * Stores an entry (atomically: a reader sees the whole file or none) and drops the oldest
   * beyond KEPT_ENTRIES. Failing to is not an error: the policy is compiled next time.
   */
  async put(key: string, entry: CompiledEntry): Promise<void> {
    const dir = this.writeDir;
    if (dir === undefined) return;
    try {
      await writeEntry(dir, key, entry);
      // The entry just written stays whatever the clock's granularity says of the others.
      const names = (await readdir(dir)).filter((name) => name.endsWith(".json") && name !== `${key}.json`);
      if (names.length < KEPT_ENTRIES) return;
      const dated = await Promise.all(
        names.map(async (name) => ({ name, mtime: (await stat(path.join(dir, name))).mtimeMs })),
      );
      dated.sort((a, b) => b.mtime - a.mtime);
      for (const { name } of dated.slice(KEPT_ENTRIES - 1)) await rm(path.join(dir, name), { force: true });
    } catch {
      // A folder that cannot be written (or pruned) costs a compile at the next start, no more.
    }
  }
}

async function readEntry(file: string, key: string): Promise<CompiledEntry | undefined> {
  let parsed: z.infer<typeof entrySchema>;
  try {
    const result = entrySchema.safeParse(JSON.parse(await readFile(file, "utf8")));
    if (!result.success) return undefined;
    parsed = result.data;
  } catch {
    return undefined;
  }
  if (parsed.key !== key) return undefined;
  const wasm = new Uint8Array(Buffer.from(parsed.wasm, "base64"));
  if (sha256(wasm) !== parsed.wasm_sha256) return undefined;
  return { wasm, hostBuiltins: parsed.hostBuiltins };
}

/** Writes an entry into `dir` (the build uses it for the shipped folder). */
export async function writeEntry(dir: string, key: string, entry: CompiledEntry): Promise<void> {
  await mkdir(dir, { recursive: true });
  const body = {
    format: FORMAT,
    key,
    hostBuiltins: entry.hostBuiltins,
    wasm_sha256: sha256(entry.wasm),
    wasm: Buffer.from(entry.wasm).toString("base64"),
  };
  const file = path.join(dir, `${key}.json`);
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temporary, JSON.stringify(body));
  await rename(temporary, file);
}

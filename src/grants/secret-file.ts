/**
 * Files that hold private keys (the grant signing keys, the development issuer's key): created
 * with mode 0600 in a 0700 directory, replaced atomically, and refused when other users can read
 * them.
 */
import { randomUUID } from "node:crypto";
import { link, mkdir, open, readFile, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { WritError } from "../core/errors.ts";

/** Identity of a file version, to notice when another process replaced it. */
export interface FileStamp {
  mtimeMs: number;
  size: number;
  ino: number;
}

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && "code" in error && error.code === code;
}

async function assertPrivate(file: string): Promise<FileStamp> {
  const info = await stat(file);
  if (process.platform !== "win32" && (info.mode & 0o077) !== 0) {
    throw new WritError(
      "internal",
      `key file ${file} is readable by other users (mode ${(info.mode & 0o777).toString(8)})`,
      { suggestedFix: `run \`chmod 600 ${file}\` (for a mounted secret, set its file mode to 0600)` },
    );
  }
  return { mtimeMs: info.mtimeMs, size: info.size, ino: info.ino };
}

/** The file's text and stamp, or `undefined` when it does not exist. */
export async function readSecretFile(file: string): Promise<{ text: string; stamp: FileStamp } | undefined> {
  let stamp: FileStamp;
  try {
    stamp = await assertPrivate(file);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
  return { text: await readFile(file, "utf8"), stamp };
}

/** The file's stamp, or `undefined` when it does not exist. */
export async function stampOf(file: string): Promise<FileStamp | undefined> {
  try {
    const info = await stat(file);
    return { mtimeMs: info.mtimeMs, size: info.size, ino: info.ino };
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
}

/**
 * Creates the file (0600) unless it exists; `false` when another process created it first. The
 * content is written to a sibling first and linked into place, so a reader never sees the file
 * empty or half-written.
 */
export async function createSecretFile(file: string, text: string): Promise<boolean> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = await writeSibling(file, text);
  try {
    await link(temporary, file);
    return true;
  } catch (error) {
    if (isErrno(error, "EEXIST")) return false;
    throw error;
  } finally {
    await rm(temporary, { force: true });
  }
}

/** Writes `text` to a new 0600 sibling of `file` (synced) and returns its path. */
async function writeSibling(file: string, text: string): Promise<string> {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${randomUUID()}.tmp`);
  const handle = await open(temporary, "wx", 0o600);
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
  return temporary;
}

/** Replaces the file's content atomically (write a 0600 sibling, then rename over it). */
export async function replaceSecretFile(file: string, text: string): Promise<FileStamp> {
  const temporary = await writeSibling(file, text);
  try {
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  return assertPrivate(file);
}

/**
 * Where the grant signing key set lives when several instances share it: a key file (one machine,
 * or a shared volume) or a table in the PostgreSQL store. The signer keeps the document (JSON, the
 * key file format) and this interface only moves it, with a stamp that changes on every write
 * so that an instance notices another's rotation with one cheap check.
 */
import { createSecretFile, readSecretFile, replaceSecretFile, stampOf } from "./secret-file.ts";

export interface StoredKeySet {
  text: string;
  /** Changes whenever the document is replaced. */
  stamp: string;
}

export interface KeySetStorage {
  /** For messages, e.g. "grant key file /srv/writ/grant-keys.json". */
  readonly description: string;
  read(): Promise<StoredKeySet | undefined>;
  /** Stores `text` unless a key set exists already (another instance may have created one first). */
  create(text: string): Promise<void>;
  /**
   * Replaces the document with `change(current)`. Where the storage can (PostgreSQL), the read
   * and the write are one transaction that other instances' replacements wait for.
   */
  replace(change: (current: string | undefined) => Promise<string>): Promise<StoredKeySet>;
  /** The current stamp, or undefined when there is no key set. */
  stamp(): Promise<string | undefined>;
}

/** A 0600 JSON file, replaced atomically (see secret-file.ts). */
export class KeyFileStorage implements KeySetStorage {
  readonly description: string;
  readonly #file: string;

  constructor(file: string) {
    this.#file = file;
    this.description = `grant key file ${file}`;
  }

  async read(): Promise<StoredKeySet | undefined> {
    const read = await readSecretFile(this.#file);
    return read === undefined ? undefined : { text: read.text, stamp: stampText(read.stamp) };
  }

  async create(text: string): Promise<void> {
    await createSecretFile(this.#file, text);
  }

  async replace(change: (current: string | undefined) => Promise<string>): Promise<StoredKeySet> {
    const text = await change((await readSecretFile(this.#file))?.text);
    return { text, stamp: stampText(await replaceSecretFile(this.#file, text)) };
  }

  async stamp(): Promise<string | undefined> {
    const stamp = await stampOf(this.#file);
    return stamp === undefined ? undefined : stampText(stamp);
  }
}

function stampText(stamp: { mtimeMs: number; size: number; ino: number }): string {
  return `${stamp.ino}:${stamp.size}:${stamp.mtimeMs}`;
}

/**
 * Gzipped tar archives in memory, with `tar-stream` for the tar format and node's zlib for
 * gzip. Entries are written with fixed metadata (mode 0644, mtime 0) so the same files always
 * give the same bytes.
 */
import { promisify } from "node:util";
import { constants, gunzip, gzip } from "node:zlib";
import tar from "tar-stream";
import { BundleError } from "./error.ts";

export interface TarFile {
  /** The entry's name as stored: `/policy.wasm`, `authz/data.json`. */
  name: string;
  bytes: Uint8Array;
}

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** OPA reads at most 1 GiB from a bundle (a guard against gzip bombs); so does Writ by default. */
export const DEFAULT_SIZE_LIMIT = 1024 * 1024 * 1024;

export async function packTarGz(files: readonly TarFile[]): Promise<Uint8Array> {
  const pack = tar.pack();
  for (const file of files) {
    pack.entry({ name: file.name, size: file.bytes.byteLength, mode: 0o644, mtime: new Date(0) }, file.bytes);
  }
  pack.finalize();
  const chunks: Uint8Array[] = [];
  for await (const chunk of pack) chunks.push(asBytes(chunk));
  return new Uint8Array(await gzipAsync(Buffer.concat(chunks), { level: constants.Z_BEST_COMPRESSION }));
}

/** tar-stream's streams carry byte chunks; their typings say `unknown`. */
function asBytes(chunk: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  throw new BundleError(`tar-stream produced a ${typeof chunk} chunk instead of bytes`);
}

function errorCode(error: unknown): string | undefined {
  if (error instanceof Error && "code" in error && typeof error.code === "string") return error.code;
  return undefined;
}

async function gunzipBundle(bytes: Uint8Array, sizeLimit: number): Promise<Buffer> {
  if (bytes.byteLength === 0) throw new BundleError("the bundle is empty (0 bytes): build it again");
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) {
    const plainTar =
      bytes.byteLength >= 262 && Buffer.from(bytes.subarray(257, 262)).toString("latin1") === "ustar";
    throw new BundleError(
      plainTar
        ? "the bundle is a tar archive without gzip compression: compress it (gzip bundle.tar) or build it with `writ policy build`"
        : "the bundle is not a gzipped tar archive (no gzip header): pass a .tar.gz built by `writ policy build` or `opa build -t wasm`",
    );
  }
  try {
    return await gunzipAsync(bytes, { maxOutputLength: sizeLimit });
  } catch (error) {
    const code = errorCode(error);
    const reason = error instanceof Error ? error.message : String(error);
    if (code === "ERR_BUFFER_TOO_LARGE" || /Cannot create a Buffer larger/i.test(reason)) {
      throw new BundleError(
        `the bundle unpacks to more than ${sizeLimit} bytes: it is too large to load (or not a real bundle)`,
      );
    }
    if (code === "Z_BUF_ERROR" || /unexpected end/i.test(reason)) {
      throw new BundleError(
        "the bundle is truncated (its gzip data ends early): copy or download it again, or rebuild it",
      );
    }
    throw new BundleError(
      `the bundle's gzip data is corrupt (${reason}): copy or download it again, or rebuild it`,
    );
  }
}

/**
 * The regular files of a gzipped tar archive, in archive order. Folders, links and other special
 * entries are skipped, as OPA's tarball loader skips them.
 */
export async function unpackTarGz(bytes: Uint8Array, sizeLimit = DEFAULT_SIZE_LIMIT): Promise<TarFile[]> {
  const archive = await gunzipBundle(bytes, sizeLimit);
  const extract = tar.extract();
  const files: TarFile[] = [];
  const reading = (async () => {
    for await (const entry of extract) {
      const chunks: Uint8Array[] = [];
      for await (const chunk of entry) chunks.push(asBytes(chunk));
      const type = entry.header.type;
      if (type === "file" || type === "contiguous-file") {
        files.push({ name: entry.header.name, bytes: new Uint8Array(Buffer.concat(chunks)) });
      }
    }
  })();
  extract.end(archive);
  try {
    await reading;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new BundleError(
      /unexpected end/i.test(reason)
        ? "the bundle's tar archive is truncated: copy or download it again, or rebuild it"
        : `the bundle's tar archive is corrupt (${reason}): copy or download it again, or rebuild it`,
    );
  }
  return files;
}

/**
 * Reloading a policy when its source changes: a folder (watched, debounced), a bundle file
 * (polled each second) or a bundle server (polled with `If-None-Match`). A reload that fails
 * leaves the working policy in place; the failure is kept in `lastLoadError` and reported.
 * Each watch returns the function that stops it.
 */
import { type FSWatcher, type Stats, unwatchFile, watch, watchFile } from "node:fs";
import { digestOf } from "./sources.ts";

/** What a watcher reports: a reload that worked (its revision) or one that failed. */
export interface ReloadEvents {
  onReload?: (revision: string) => void;
  onError?: (error: Error) => void;
}

/** What a watcher reloads: the engine's loads, and where it keeps the last failure. */
export interface Reloadable {
  loadDirectory(dir: string): Promise<string>;
  loadBundle(source: string): Promise<string>;
  loadBundleBytes(bytes: Uint8Array, origin: string): Promise<string>;
  lastLoadError: string | undefined;
}

/** A bundle as a bundle server last answered it. */
export interface ServedBundle {
  digest: string;
  etag?: string;
}

/** A reload that failed: the working policy stays, and the failure is reported. */
function failedWith(target: Reloadable, events: ReloadEvents): (error: unknown) => void {
  return (error) => {
    const e = error instanceof Error ? error : new Error(String(error));
    target.lastLoadError = e.message;
    events.onError?.(e);
  };
}

/** Reloads the folder when its files change (debounced). */
export function watchDirectory(target: Reloadable, dir: string, events: ReloadEvents): () => void {
  const failed = failedWith(target, events);
  let watcher: FSWatcher | undefined;
  let reloadTimer: NodeJS.Timeout | undefined;
  let arming = false;
  const arm = () => {
    watcher?.close();
    arming = true;
    try {
      watcher = watch(dir, { recursive: true }, onChange);
    } finally {
      arming = false;
    }
    // Without a listener, a watcher error (a folder removed while being read) would crash Writ.
    watcher.on("error", failed);
  };
  const onChange = () => {
    // The initial scan of a (re)armed watcher is not a change.
    if (arming) return;
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(() => {
      // Node 20's recursive watcher on Linux keeps watching the old inode of a file replaced
      // by a rename (atomic writes, most editors, config sync tools) and then misses every
      // later change of it: watch the folder's files afresh before reading them.
      try {
        arm();
      } catch {
        // The folder is gone; loading it reports that.
      }
      target.loadDirectory(dir).then((revision) => events.onReload?.(revision), failed);
    }, 100);
  };
  arm();
  return () => {
    clearTimeout(reloadTimer);
    watcher?.close();
  };
}

/** Reloads a bundle file when it changes, polled each second (atomic replaces are fine). */
export function watchBundleFile(target: Reloadable, source: string, events: ReloadEvents): () => void {
  const failed = failedWith(target, events);
  const listener = (current: Stats, previous: Stats) => {
    if (current.mtimeMs === previous.mtimeMs && current.size === previous.size) return;
    target.loadBundle(source).then((revision) => events.onReload?.(revision), failed);
  };
  watchFile(source, { interval: 1000 }, listener);
  return () => unwatchFile(source, listener);
}

/**
 * Polls a bundle server every `pollIntervalMs` with `If-None-Match`, starting from `known` (what
 * was installed from it, if anything), and installs a bundle that changed.
 */
export function pollBundleServer(
  target: Reloadable,
  source: string,
  events: ReloadEvents,
  options: {
    pollIntervalMs: number;
    known: ServedBundle | undefined;
    fetch: (etag: string | undefined) => Promise<{ bytes?: Uint8Array; etag?: string }>;
  },
): () => void {
  const failed = failedWith(target, events);
  const { known, pollIntervalMs } = options;
  let etag = known?.etag;
  let digest = known?.digest;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const poll = async () => {
    try {
      const fetched = await options.fetch(etag);
      etag = fetched.etag;
      const next = fetched.bytes === undefined ? digest : digestOf(fetched.bytes);
      if (fetched.bytes === undefined || next === digest) {
        // The server answered and nothing changed: a failure reported earlier is over.
        target.lastLoadError = undefined;
        return;
      }
      const revision = await target.loadBundleBytes(fetched.bytes, source);
      digest = next;
      events.onReload?.(revision);
    } catch (error) {
      failed(error);
    } finally {
      if (!stopped) timer = setTimeout(() => void poll(), pollIntervalMs);
    }
  };
  timer = setTimeout(() => void poll(), known ? pollIntervalMs : 0);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/**
 * Which modules an import loads, seen from outside: `loaded-modules.mjs` in a child Node process
 * (plain Node for compiled code, `--import tsx` for the sources), summarised as Writ's own
 * modules (paths below the source or dist root) and the third-party packages.
 */
import { execFile } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { z } from "zod";

const run = promisify(execFile);
const lister = fileURLToPath(new URL("./loaded-modules.mjs", import.meta.url));

export interface LoadedModules {
  /** Writ's own modules, relative to `root` without extension, e.g. `executor/verify`. */
  own: string[];
  /** Third-party packages, e.g. `jose`, `@hono/node-server`. */
  packages: string[];
}

async function loadedBy(specifier: string, cwd: string, tsx: boolean): Promise<string[]> {
  const args = [...(tsx ? ["--import", "tsx"] : []), lister, specifier];
  const { stdout } = await run(process.execPath, args, { cwd });
  return z.array(z.string()).parse(JSON.parse(stdout));
}

/**
 * The modules `specifier` loads in a Node process started in `cwd`, minus what the lister and
 * the loader load by themselves (measured by loading a built-in module the same way).
 */
export async function modulesLoadedBy(
  specifier: string,
  options: { cwd: string; root: string; tsx: boolean },
): Promise<LoadedModules> {
  const [loaded, baseline] = await Promise.all([
    loadedBy(specifier, options.cwd, options.tsx),
    loadedBy("node:os", options.cwd, options.tsx),
  ]);
  const before = new Set(baseline);
  const rootUrl = `${pathToFileURL(options.root).href}/`;
  const own = new Set<string>();
  const packages = new Set<string>();
  for (const url of loaded) {
    if (before.has(url) || url.startsWith("node:")) continue;
    // The root first: an installed package's dist/ is itself under node_modules.
    const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
    if (url.startsWith(rootUrl)) own.add(url.slice(rootUrl.length).replace(/\.(ts|js)$/, ""));
    else if (pkg !== undefined) packages.add(pkg);
    else throw new Error(`${specifier} loaded ${url}, outside ${rootUrl} and node_modules`);
  }
  return { own: [...own].sort(), packages: [...packages].sort() };
}

/** What `writ/executor` may load: its own folder, the small core modules, and three packages. */
const executorAllowance = {
  own: /^(executor\/[a-z-]+|core\/(errors|field-errors|digest|json-pointer|types|bounded))$/,
  packages: ["canonicalize", "jose", "zod"],
};

/** The modules and packages of `loaded` that `writ/executor` may not load (none, if it stands alone). */
export function beyondExecutor(loaded: LoadedModules): string[] {
  return [
    ...loaded.own.filter((m) => !executorAllowance.own.test(m)),
    ...loaded.packages.filter((p) => !executorAllowance.packages.includes(p)),
  ];
}

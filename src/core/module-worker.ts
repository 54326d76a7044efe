/**
 * A worker thread running one module: compiled JavaScript as it is, or TypeScript source through
 * tsx's loader, registered in the worker (a worker does not inherit the process's loader flags).
 */
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { type ResourceLimits, Worker, type WorkerOptions } from "node:worker_threads";
import { WritError } from "./errors.ts";

/**
 * Starts a worker on `target` (a `.js` or `.ts` module URL), with the thread's resource limits and
 * its `workerData` (and what that transfers).
 */
export function moduleWorker(
  target: URL,
  resourceLimits?: ResourceLimits,
  data?: Pick<WorkerOptions, "workerData" | "transferList">,
): Worker {
  const options = { ...(resourceLimits === undefined ? {} : { resourceLimits }), ...data };
  if (!target.pathname.endsWith(".ts")) return new Worker(target, options);
  const bootstrap = `import(${JSON.stringify(tsxLoaderApi())})
    .then((tsx) => tsx.register())
    .then(() => import(${JSON.stringify(target.href)}));`;
  return new Worker(bootstrap, { eval: true, execArgv: [], ...options });
}

/** The URL of tsx's ESM loader API (`tsx/esm/api`), found through the package's own exports map. */
function tsxLoaderApi(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve("tsx/package.json");
  const exported: unknown = require("tsx/package.json").exports?.["./esm/api"]?.import?.default;
  if (typeof exported !== "string") {
    throw new WritError("internal", "tsx does not export its ESM loader API (tsx/esm/api)", {
      suggestedFix:
        "install the tsx version in package.json (npm install), or run Writ from compiled JavaScript",
    });
  }
  return pathToFileURL(path.join(path.dirname(manifest), exported)).href;
}

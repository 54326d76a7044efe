/**
 * Policy evaluation (pipeline stage 5): Rego policies compiled to WebAssembly by Writ's own
 * compiler and evaluated with `@open-policy-agent/opa-wasm`.
 *
 * A `PolicyEngine` holds one loaded policy at a time. Loading compiles every `.rego` file of a
 * folder (tests excluded) with the decision entrypoint (or takes the module compiled from the
 * same sources by the same compiler from the compiled-policy cache), or reads a bundle;
 * reloading swaps the new policy in atomically, and a policy that fails to load never replaces
 * a working one.
 * Evaluation fails closed: an undefined or malformed answer, an abort inside the module, or an
 * evaluation over its time budget is a `PolicyFailure`, which the pipeline turns into a denial.
 * A module Writ compiled is metered (`rego/wasm/meter.ts`): it is evaluated on the calling
 * thread and stops itself when its budget runs out, not after. With `isolate`, a revision that
 * is not metered (a bundle `opa` built) or calls custom builtins (JavaScript the meter cannot
 * stop) is evaluated on worker threads (evaluator.ts), one of which is ended when the budget
 * runs out; with `strictBuiltinErrors`, a builtin that fails (a bad regex, a malformed JWT)
 * fails the evaluation, naming the builtin, instead of being undefined.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { z } from "zod";
import type { PolicyInput } from "../core/types.ts";
import type { RegoSource } from "../rego/build.ts";
import type { CustomBuiltins } from "../rego/builtins/custom.ts";
import { importedBuiltin } from "../rego/host/index.ts";
import type { OpaRuntime } from "../rego/opa-runtime.ts";
import { EvaluationBudgetExceeded, loadPolicyFromBundle, type Policy } from "../rego/policy.ts";
import type { RegoVersion } from "../rego/syntax/index.ts";
import {
  type CompiledSources,
  compileSources,
  OPA_RUNTIME_DISABLED,
  refusesRuntime,
  runtimeOption,
} from "./compile.ts";
import { CompiledPolicyCache } from "./compiled-cache.ts";
import type { EvaluatedDecision, PolicyDecider } from "./decider.ts";
import { validateDecision } from "./decision.ts";
import { evaluationFailure, PolicyFailure, PolicyLoadError } from "./errors.ts";
import {
  EvaluationOverrun,
  type EvaluatorPolicy,
  EvaluatorThreads,
  EvaluatorUnavailable,
} from "./evaluator.ts";
import {
  bundleOrigin,
  type DirectorySources,
  dataOfFiles,
  digestOf,
  fetchBundle,
  isBundleUrl,
  type LoadedRevision,
  readBundleFile,
  readDirectorySources,
  splitPolicyFiles,
} from "./sources.ts";
import { pollBundleServer, type ReloadEvents, watchBundleFile, watchDirectory } from "./watch.ts";

export const DEFAULT_ENTRYPOINT = "writ/decision";

interface LoadedPolicy {
  revision: string;
  policy: Policy;
  /**
   * Where evaluations run when the engine isolates them and the module cannot stop itself
   * (`stopsItself`); none otherwise.
   */
  threads?: EvaluatorThreads;
}

const sdkResultSchema = z.array(z.object({ result: z.unknown() }));

export interface PolicyEngineOptions {
  entrypoint?: string;
  /** Evaluations slower than this are treated as failures (default 250 ms). */
  timeBudgetMs?: number;
  /**
   * Stop every evaluation when its budget runs out, also one the module cannot stop itself:
   * those run on worker threads (evaluator.ts). Default false: a module that is not metered is
   * evaluated on the calling thread, a slow evaluation judged when it ends. A metered module
   * (every module Writ compiles) is stopped at its budget either way.
   */
  isolate?: boolean;
  /** Compile with strict builtin errors: a failing builtin fails the evaluation (default false). */
  strictBuiltinErrors?: boolean;
  /**
   * The Rego version of a policy folder's sources (`policy.rego_version`, default 1). A
   * revision loaded back from the archive keeps the version it was loaded with; a bundle's
   * module is loaded as built.
   */
  regoVersion?: RegoVersion;
  /** Headers for requests to a bundle server (its credentials), resolved per request. */
  bundleHeaders?: () => Promise<Record<string, string>>;
  /**
   * Where compiled policies are looked up and kept (default: only the package's precompiled
   * sample policies, read-only).
   */
  compiledCache?: CompiledPolicyCache;
  /**
   * The folder the sources' names (in compile errors and the module's own messages) are
   * relative to; default the working directory. The package's sample policies are named from
   * the package's root, so that the entry precompiled by the build matches from any folder.
   */
  sourceRoot?: string;
  /**
   * Told of every revision installed (the first load, every reload), with what it was loaded
   * from: the server archives it (src/policy/revisions.ts). Must not throw.
   */
  onLoad?: (loaded: LoadedRevision) => void;
  /**
   * Custom builtins (`policy.builtins` in the configuration) the policies may call: compiled
   * against their declarations, and required of a bundle that records them.
   */
  builtins?: CustomBuiltins;
  /**
   * What `opa.runtime()` shows the policy (default: no environment variable, no configuration),
   * or `disabled`: a policy that calls it does not load (`policy.opa_runtime` in the configuration).
   */
  opaRuntime?: OpaRuntime | "disabled";
}

export type { EvaluatedDecision, PolicyDecider } from "./decider.ts";
export type { ReloadEvents } from "./watch.ts";

export class PolicyEngine implements PolicyDecider {
  readonly entrypoint: string;
  private readonly timeBudgetMs: number;
  private readonly isolate: boolean;
  private readonly strictBuiltinErrors: boolean;
  private current: LoadedPolicy | undefined;
  /** The evaluator threads of an isolating engine (started with the first revision). */
  private threads: Promise<EvaluatorThreads> | undefined;
  /** Stops the watch of the policy's source (watch.ts), when one runs. */
  private stopWatching: (() => void) | undefined;
  private readonly bundleHeaders: (() => Promise<Record<string, string>>) | undefined;
  private readonly compiledCache: CompiledPolicyCache;
  private readonly sourceRoot: string | undefined;
  private readonly onLoad: ((loaded: LoadedRevision) => void) | undefined;
  /** The custom builtins its policies may call (an archived revision is loaded with the same). */
  readonly builtins: CustomBuiltins | undefined;
  private readonly regoVersion: RegoVersion;
  private readonly opaRuntime: OpaRuntime | "disabled";
  /** The bundle last installed from a bundle server: where from, its digest and ETag. */
  private served: { url: string; digest: string; etag?: string } | undefined;
  /** The last reload failure, until a reload succeeds. */
  lastLoadError: string | undefined;

  constructor(options: PolicyEngineOptions = {}) {
    this.entrypoint = options.entrypoint ?? DEFAULT_ENTRYPOINT;
    this.timeBudgetMs = options.timeBudgetMs ?? 250;
    // Custom builtins defined in this process (not imported from modules) cannot be called from
    // an evaluator thread: such an engine evaluates on the calling thread.
    const builtins = options.builtins;
    this.isolate =
      (options.isolate ?? false) &&
      (builtins === undefined || builtins.size === 0 || builtins.modules.length > 0);
    this.strictBuiltinErrors = options.strictBuiltinErrors ?? false;
    this.bundleHeaders = options.bundleHeaders;
    this.compiledCache = options.compiledCache ?? new CompiledPolicyCache();
    this.sourceRoot = options.sourceRoot;
    this.onLoad = options.onLoad;
    this.builtins = options.builtins;
    this.regoVersion = options.regoVersion ?? 1;
    this.opaRuntime = options.opaRuntime ?? { env: {}, config: {} };
  }

  /** What `opa.runtime()` shows a loaded policy; nothing when it is disabled (no policy calls it). */
  private get runtime(): { runtime?: OpaRuntime } {
    return runtimeOption(this.opaRuntime);
  }

  /** Whether a module that imports these host builtins calls `opa.runtime` while it is disabled. */
  private refusesRuntime(hostBuiltins: readonly string[]): boolean {
    return refusesRuntime(this.opaRuntime, hostBuiltins);
  }

  get revision(): string | undefined {
    return this.current?.revision;
  }

  /** Compiles the policies of a folder and swaps them in. Throws PolicyLoadError. */
  async loadDirectory(dir: string): Promise<string> {
    return this.loadSources(await readDirectorySources(dir, this.regoVersion));
  }

  /**
   * Compiles a folder's sources and data files as read (by `loadDirectory`, or back from the
   * revision archive) and swaps them in. Throws PolicyLoadError.
   */
  async loadSources(sources: DirectorySources): Promise<string> {
    const dir = sources.origin;
    const { rego, data: dataFiles } = splitPolicyFiles(sources.files);
    if (rego.length === 0) throw new PolicyLoadError(`no .rego files in ${dir}`, []);
    const regoVersion = sources.regoVersion ?? 1;
    const compiled = rego.map((f) => {
      const file = path.join(dir, f.path);
      return {
        file: path.relative(this.sourceRoot ?? process.cwd(), file) || file,
        source: f.text,
        regoVersion,
      };
    });
    const data = dataOfFiles(dataFiles, dir);
    // The revision depends on the files' paths inside the folder and their contents (and a Rego
    // version other than 1) only, so instances started from different working directories agree.
    const hash = createHash("sha256");
    for (const f of rego) hash.update(f.path).update("\0").update(f.text).update("\0");
    hash.update(JSON.stringify(data));
    if (regoVersion === 0) hash.update("\0rego_version 0");
    const revision = hash.digest("hex").slice(0, 16);

    const { policy, wasm, hostBuiltins } = await this.compile(compiled, data, dir);
    await this.install(policy, revision, { kind: "compiled", wasm, hostBuiltins, data });
    this.onLoad?.({ id: revision, sources });
    return revision;
  }

  /** The policy compiled from `sources` (or taken from the compiled-policy cache: compile.ts). */
  private compile(
    sources: RegoSource[],
    data: Record<string, unknown>,
    dir: string,
  ): Promise<CompiledSources> {
    return compileSources(
      {
        entrypoint: this.entrypoint,
        cache: this.compiledCache,
        builtins: this.builtins,
        strictBuiltinErrors: this.strictBuiltinErrors,
        opaRuntime: this.opaRuntime,
      },
      sources,
      data,
      dir,
    );
  }

  /** What an evaluator thread loads a policy with besides its module (custom builtins, opa.runtime). */
  private get evaluatorHost(): Pick<EvaluatorPolicy, "builtinModules" | "runtime"> {
    const modules = this.builtins?.modules ?? [];
    return {
      ...(modules.length === 0 ? {} : { builtinModules: [...modules] }),
      ...this.runtime,
    };
  }

  private async install(policy: Policy, revision: string, module: EvaluatorPolicy): Promise<void> {
    const loaded: EvaluatorPolicy = { ...module, ...this.evaluatorHost };
    if (!policy.entrypoints.includes(this.entrypoint)) {
      throw new PolicyLoadError(`the policy has no entrypoint ${this.entrypoint}`, [
        `its entrypoints: ${policy.entrypoints.join(", ") || "none"}`,
      ]);
    }
    // Isolated, the evaluator threads load the revision first (and evaluate the old one meanwhile);
    // a revision that stops itself needs none, and threads left from an earlier one are ended.
    let threads: EvaluatorThreads | undefined;
    if (this.stopsItself(policy)) {
      const started = this.threads;
      this.threads = undefined;
      void started?.then(
        (old) => old.close(),
        () => undefined,
      );
    } else if (this.isolate) {
      const started = this.threads;
      if (started === undefined) {
        this.threads = EvaluatorThreads.start(loaded, this.entrypoint);
        // A first load that failed leaves no threads: the next load starts them.
        threads = await this.threads.catch((error: unknown) => {
          this.threads = undefined;
          throw error;
        });
      } else {
        threads = await started;
        await threads.load(loaded);
      }
    }
    // The swap is a single assignment: an evaluation sees the old policy or the new one.
    this.current = { revision, policy, ...(threads === undefined ? {} : { threads }) };
    this.lastLoadError = undefined;
    for (const listener of this.#installed) listener(revision);
  }

  /**
   * Whether evaluations of `policy` stop themselves at their budget on the calling thread: a
   * metered module that calls no custom builtin (their JavaScript could run past any deadline).
   */
  private stopsItself(policy: Policy): boolean {
    const custom = this.builtins;
    return (
      policy.metered &&
      (custom === undefined ||
        !policy.hostBuiltins.some((name) => custom.get(importedBuiltin(name)) !== undefined))
    );
  }

  readonly #installed = new Set<(revision: string) => void>();

  onInstalled(listener: (revision: string) => void): () => void {
    const entry = (revision: string) => listener(revision);
    this.#installed.add(entry);
    return () => this.#installed.delete(entry);
  }

  /** Stops watching and ends the evaluator threads (an isolating engine evaluates no more). */
  close(): void {
    this.unwatch();
    void this.threads?.then(
      (threads) => threads.close(),
      () => undefined,
    );
  }

  /**
   * Loads a bundle in the layout of `opa build -t wasm` (built by `writ policy build` or by
   * `opa`), with its data, and swaps it in. Its revision is the manifest's, or a hash of it.
   * `source` is a file, or an http(s) URL (a bundle server, as OPA's bundle service): every
   * instance pointed at the same URL runs the same policy.
   */
  async loadBundle(source: string): Promise<string> {
    if (!isBundleUrl(source)) return this.installBundle(await readBundleFile(source), source);
    const { bytes, etag } = await this.fetchBundle(source);
    if (bytes === undefined)
      throw new PolicyLoadError(`the bundle server at ${source} answered no bundle`, []);
    const revision = await this.installBundle(bytes, source);
    // What watchBundle's polling starts from: its first request asks with this ETag.
    this.served = { url: source, digest: digestOf(bytes), ...(etag === undefined ? {} : { etag }) };
    return revision;
  }

  private async installBundle(bytes: Uint8Array, source: string): Promise<string> {
    let policy: Awaited<ReturnType<typeof loadPolicyFromBundle>>;
    try {
      policy = await loadPolicyFromBundle(bytes, { builtins: this.builtins, ...this.runtime });
    } catch (error) {
      throw new PolicyLoadError(`the bundle ${source} cannot be loaded`, [
        error instanceof Error ? error.message : String(error),
      ]);
    }
    if (this.refusesRuntime(policy.hostBuiltins)) {
      throw new PolicyLoadError(`the bundle ${source} cannot be loaded`, [
        `its policy calls opa.runtime: ${OPA_RUNTIME_DISABLED}`,
      ]);
    }
    const revision =
      policy.manifest.revision || createHash("sha256").update(bytes).digest("hex").slice(0, 16);
    await this.install(policy, revision, { kind: "bundle", bytes });
    this.onLoad?.({ id: revision, sources: { kind: "bundle", origin: bundleOrigin(source), bytes } });
    return revision;
  }

  /** Loads a bundle's bytes (as archived) and swaps it in. Throws PolicyLoadError. */
  async loadBundleBytes(bytes: Uint8Array, origin: string): Promise<string> {
    return this.installBundle(bytes, origin);
  }

  /** Fetches a bundle from a bundle server (`fetchBundle` in sources.ts) with its headers. */
  private async fetchBundle(url: string, etag?: string): Promise<{ bytes?: Uint8Array; etag?: string }> {
    return fetchBundle(url, await this.bundleHeaders?.(), etag);
  }

  /**
   * Reloads the folder when its files change (debounced). A policy that fails to load leaves
   * the working one in place and is reported through `lastLoadError` and `onError`.
   */
  watchDirectory(dir: string, events: ReloadEvents = {}): void {
    this.unwatch();
    this.stopWatching = watchDirectory(this, dir, events);
  }

  /**
   * Reloads a bundle when it changes: a file is polled each second (atomic replaces are fine),
   * a bundle server every `pollIntervalMs` with `If-None-Match`. A bundle that fails to load
   * leaves the working policy in place.
   */
  watchBundle(source: string, events: ReloadEvents = {}, pollIntervalMs = 10_000): void {
    this.unwatch();
    this.stopWatching = isBundleUrl(source)
      ? pollBundleServer(this, source, events, {
          pollIntervalMs,
          // Starting from what loadBundle installed, when it came from this server.
          known: this.served?.url === source ? this.served : undefined,
          fetch: (etag) => this.fetchBundle(source, etag),
        })
      : watchBundleFile(this, source, events);
  }

  unwatch(): void {
    this.stopWatching?.();
    this.stopWatching = undefined;
  }

  /** Evaluates the decision entrypoint. Throws PolicyFailure when the answer cannot be used. */
  evaluate(input: PolicyInput): EvaluatedDecision {
    return this.evaluateStored(input);
  }

  /**
   * Evaluates the decision entrypoint for an input read back from the decision log (redacted,
   * written by another release): any JSON value, as the module takes it. Throws PolicyFailure
   * as `evaluate` does.
   */
  evaluateStored(input: unknown): EvaluatedDecision {
    const policy = this.current;
    if (!policy) throw new PolicyFailure("policy_unavailable", "no policy is loaded");
    const started = process.hrtime.bigint();
    let raw: unknown;
    try {
      raw = policy.threads
        ? policy.threads.evaluate(input, this.timeBudgetMs)
        : policy.policy.evaluate(input, this.entrypoint, this.timeBudgetMs);
    } catch (error) {
      if (error instanceof EvaluationOverrun || error instanceof EvaluationBudgetExceeded)
        throw new PolicyFailure("policy_too_slow", error.message);
      if (error instanceof EvaluatorUnavailable) throw new PolicyFailure("policy_unavailable", error.message);
      throw evaluationFailure(error);
    }
    const evalNs = Number(process.hrtime.bigint() - started);
    if (evalNs > this.timeBudgetMs * 1e6) {
      throw new PolicyFailure(
        "policy_too_slow",
        `the policy took ${(evalNs / 1e6).toFixed(1)} ms, over its ${this.timeBudgetMs} ms budget`,
      );
    }
    const results = sdkResultSchema.safeParse(raw);
    if (!results.success || results.data.length === 0) {
      throw new PolicyFailure("policy_undefined", `${this.entrypoint} is undefined for this input`);
    }
    if (results.data.length > 1) {
      throw new PolicyFailure(
        "policy_malformed",
        `${this.entrypoint} produced ${results.data.length} results`,
      );
    }
    return {
      decision: validateDecision(results.data[0]!.result, this.entrypoint),
      revision: policy.revision,
      evalNs,
    };
  }
}

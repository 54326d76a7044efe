/** What a program run inside QuickJS (sandbox-run.ts) takes from and gives to the thread running it. */
import type { CallAnswer, ProgramOutcome, SandboxLimits, StopReason } from "./sandbox-types.ts";

export interface RunHost {
  /** One inner call: `argsJson` is the program's arguments as JSON text; `index` counts from 0. */
  call(tool: string, argsJson: string, index: number): Promise<CallAnswer>;
  /** A call the program started while its answer was built: refused, not made (`index` counts). */
  late(tool: string, argsJson: string, index: number): void;
}

export interface EngineRunOptions {
  /** The transpiled program: an async function expression (`transpileProgram`). */
  code: string;
  tools: readonly string[];
  limits: SandboxLimits;
  host: RunHost;
  /** What `Date.now()` answers inside the run (milliseconds since the epoch). */
  clockMs: number;
  /** Told when QuickJS starts (true) and stops (false) executing for this run. */
  onSlice?: (active: boolean, cpuLeftMs: number) => void;
}

/** Thrown by a run's `outcome` when the WebAssembly instance faulted; the instance must be dropped. */
export class EngineFault extends Error {
  constructor(readonly fault: unknown) {
    super(
      `the sandbox's WebAssembly instance faulted: ${fault instanceof Error ? fault.message : String(fault)}`,
    );
    this.name = "EngineFault";
  }
}

/** A run in progress, as the caller sees it: stop it from outside (abort, duration, a fault). */
export interface EngineRun {
  readonly outcome: Promise<ProgramOutcome>;
  stop(reason: StopReason, message: string, detail?: unknown): void;
  /** Stops the run without touching its instance again (another run faulted it). */
  abandon(message: string): void;
}

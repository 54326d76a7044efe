/** Where and on what a benchmark ran: recorded in every JSON summary so that runs can be compared. */
import { execFile } from "node:child_process";
import { availableParallelism, cpus, loadavg, platform, release } from "node:os";
import { promisify } from "node:util";

export interface MachineInfo {
  /** ISO 8601, when the run started. */
  date: string;
  node: string;
  platform: string;
  cpuModel: string;
  cpuCount: number;
  /** `git rev-parse HEAD` of the working directory, with `+dirty` when it has changes; null without git. */
  commit: string | null;
  /**
   * The 1-minute load average when the run started: other processes' share of the CPUs (absent
   * from summaries written before it was recorded).
   */
  loadAverage?: number | undefined;
}

const run = promisify(execFile);

async function gitCommit(cwd: string): Promise<string | null> {
  try {
    const head = (await run("git", ["rev-parse", "HEAD"], { cwd })).stdout.trim();
    const status = (await run("git", ["status", "--porcelain", "--untracked-files=no"], { cwd })).stdout;
    return status.trim() === "" ? head : `${head}+dirty`;
  } catch {
    return null;
  }
}

export async function machineInfo(cwd: string, date = new Date()): Promise<MachineInfo> {
  return {
    date: date.toISOString(),
    node: process.version,
    platform: `${platform()} ${release()}`,
    cpuModel: cpus()[0]?.model.trim() ?? "unknown",
    cpuCount: availableParallelism(),
    commit: await gitCommit(cwd),
    loadAverage: loadAverage(),
  };
}

/** The 1-minute load average, to two decimals. */
export function loadAverage(): number {
  return Math.round((loadavg()[0] ?? 0) * 100) / 100;
}

export function describeMachine(machine: MachineInfo): string {
  return `${machine.date}  node ${machine.node}  ${machine.cpuCount} x ${machine.cpuModel}  commit ${machine.commit ?? "unknown"}  load average ${machine.loadAverage ?? "unknown"}`;
}

/** A warning when other processes were keeping the CPUs busy as the run started, or nothing. */
export function busyMachineWarning(machine: MachineInfo): string | undefined {
  if (machine.loadAverage === undefined || machine.loadAverage < machine.cpuCount / 2) return undefined;
  return `note: the load average was ${machine.loadAverage} on ${machine.cpuCount} CPUs as the run started: other processes share them, the numbers are noisy (compare ratios within a run, or alternate runs)`;
}

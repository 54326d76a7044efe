/**
 * The order a proposal's calls run in (issue 18): read-only calls run beside the read-only calls
 * next to them, at most `limit` at once; a call with side effects starts once every earlier call
 * ended, and the later calls start once it ended. So a proposal's reads run concurrently while a
 * read after a write still sees the write. Read-only calls of one concurrency group follow each
 * other (they would only queue for the group at dispatch, their waits adding up against their
 * bound). Outcomes keep the proposal's order.
 */

export interface Schedule {
  /** The calls that run. */
  count: number;
  /** Whether call `i` may run beside other read-only calls. */
  readOnly(i: number): boolean;
  /** Call `i`'s concurrency group, if it has one. */
  group(i: number): string | undefined;
  /** Read-only calls running at the same time, at most. */
  limit: number;
}

/** What a schedule did: the most calls that ran at once, and how many ran beside others or alone. */
export interface ScheduleStats {
  peak: number;
  concurrent: number;
  ordered: number;
}

/**
 * Runs `run(i)` for every call in the schedule's order; their results in the calls' order. When
 * one call throws, no further call starts, the running ones finish, and the first error is thrown.
 */
export async function runScheduled<T>(
  schedule: Schedule,
  run: (i: number) => Promise<T>,
): Promise<{ results: T[]; stats: ScheduleStats }> {
  const results = new Array<T>(schedule.count);
  const running = new Set<Promise<void>>();
  const lastOfGroup = new Map<string, Promise<void>>();
  const stats: ScheduleStats = { peak: 0, concurrent: 0, ordered: 0 };
  let active = 0;
  let failure: { error: unknown } | undefined;
  const runOne = async (i: number) => {
    if (failure !== undefined) return;
    active += 1;
    stats.peak = Math.max(stats.peak, active);
    try {
      results[i] = await run(i);
    } catch (error) {
      failure ??= { error };
    } finally {
      active -= 1;
    }
  };
  const start = (i: number) => {
    const group = schedule.group(i);
    const before = group === undefined ? undefined : lastOfGroup.get(group);
    const settled: Promise<void> = (before === undefined ? runOne(i) : before.then(() => runOne(i))).then(
      () => {
        running.delete(settled);
      },
    );
    if (group !== undefined) lastOfGroup.set(group, settled);
    running.add(settled);
  };
  for (let i = 0; i < schedule.count && failure === undefined; i++) {
    if (schedule.readOnly(i)) {
      while (running.size >= schedule.limit) await Promise.race(running);
      if (failure !== undefined) break;
      stats.concurrent += 1;
      start(i);
    } else {
      await Promise.all(running);
      if (failure !== undefined) break;
      stats.ordered += 1;
      start(i);
      await Promise.all(running);
    }
  }
  await Promise.all(running);
  if (failure !== undefined) throw failure.error;
  return { results, stats };
}

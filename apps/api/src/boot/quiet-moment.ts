import { performance } from 'node:perf_hooks';

/** How often the event loop's use is read while waiting for a quiet moment. */
export const QUIET_CHECK_MS = 100;
/** The share of the last check's time the event loop may have been busy for it to count as quiet. */
export const QUIET_UTILIZATION = 0.1;
/** After this long the task runs whatever the load: a server that is never quiet still gets it done. */
export const QUIET_MAX_WAIT_MS = 60_000;

/** The event loop's use (0–1) since the previous call: Node's `eventLoopUtilization` between readings. */
export function eventLoopUse(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const use = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return use;
  };
}

/**
 * Runs `task` once, at the first quiet moment at least `afterMs` from now: a check (every
 * QUIET_CHECK_MS) that finds the event loop busy less than QUIET_UTILIZATION of the time since the
 * previous one, or `maxWaitMs` (QUIET_MAX_WAIT_MS) after `afterMs` at the latest. For work that
 * can wait and would otherwise take the CPU from the requests in flight (the compile cache's save:
 * ~100 ms of main-thread CPU; a pass of memory embeddings). Returns a cancel. The timers do not
 * keep the process alive.
 */
export function atQuietMoment(
  task: () => void,
  afterMs: number,
  use: () => number = eventLoopUse(),
  maxWaitMs = QUIET_MAX_WAIT_MS,
): () => void {
  let waited = 0;
  let timer: NodeJS.Timeout;
  const check = () => {
    if (use() < QUIET_UTILIZATION || waited >= maxWaitMs) return task();
    waited += QUIET_CHECK_MS;
    timer = setTimeout(check, QUIET_CHECK_MS).unref();
  };
  timer = setTimeout(
    () => {
      // The reading over the start's busy first moments does not count: a fresh window.
      use();
      timer = setTimeout(check, QUIET_CHECK_MS).unref();
    },
    Math.max(0, afterMs - QUIET_CHECK_MS),
  ).unref();
  return () => clearTimeout(timer);
}

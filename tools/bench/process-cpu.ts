import { existsSync, readFileSync, readdirSync } from 'node:fs';

/** Whether this kernel keeps per-thread run times (`schedstat`); decided once, so one source serves a whole run. */
const HAS_SCHEDSTAT = existsSync(`/proc/${process.pid}/schedstat`);

/** One thread's run time so far in ms (schedstat, nanoseconds); 0 once it has ended. */
function threadCpuMs(pid: number, tid: number | string): number {
  try {
    return (
      Number(
        readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(
          ' ',
        )[0],
      ) / 1e6
    );
  } catch {
    return 0; // The thread ended after the listing.
  }
}

/**
 * CPU of a process so far, in ms: the sum of its threads' run time from /proc/<pid>/task/<tid>/schedstat
 * (nanoseconds), so a block of a few turns is measured to the microsecond (a thread that ends between the
 * listing and the read is skipped); without schedstat, user + system from /proc/<pid>/stat (10 ms ticks).
 */
export function cpuMs(pid: number): number {
  if (!HAS_SCHEDSTAT) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Clock ticks per second for /proc/<pid>/stat: USER_HZ, 100 on Linux.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  }
  let ms = 0;
  for (const task of readdirSync(`/proc/${pid}/task`))
    ms += threadCpuMs(pid, task);
  return ms;
}

/** Where the machine's CPU went while the built API served: its main thread, its other threads, its children, this process. */
export interface CpuSplit {
  apiMain: number;
  apiOther: number;
  /** The API's child processes (the embedded FerretDB). */
  database: number;
  /** The bench process: its client and the fake provider. */
  bench: number;
}

/** The API's child processes (FerretDB's launcher and what it started). */
function descendants(pid: number): number[] {
  const found: number[] = [];
  const visit = (parent: number) => {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      return; // The process ended after its parent listed it.
    }
    for (const task of tasks) {
      let children: string;
      try {
        children = readFileSync(
          `/proc/${parent}/task/${task}/children`,
          'utf8',
        );
      } catch {
        continue;
      }
      for (const child of children.split(/\s+/).filter(Boolean).map(Number)) {
        found.push(child);
        visit(child);
      }
    }
  };
  visit(pid);
  return found;
}

/** CPU so far of the API `pid` (main thread apart), its children and this process; null where /proc lacks schedstat. */
export function cpuSplit(pid: number): CpuSplit | null {
  if (!HAS_SCHEDSTAT) return null;
  const api = cpuMs(pid);
  const apiMain = threadCpuMs(pid, pid);
  let database = 0;
  for (const child of descendants(pid)) {
    try {
      database += cpuMs(child);
    } catch {
      // The child ended after the listing.
    }
  }
  return {
    apiMain,
    apiOther: api - apiMain,
    database,
    bench: cpuMs(process.pid),
  };
}

/** `after` − `before`, field by field. */
export function cpuSpent(before: CpuSplit, after: CpuSplit): CpuSplit {
  return {
    apiMain: after.apiMain - before.apiMain,
    apiOther: after.apiOther - before.apiOther,
    database: after.database - before.database,
    bench: after.bench - before.bench,
  };
}

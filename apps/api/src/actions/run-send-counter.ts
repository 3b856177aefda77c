/** Runs remembered at once; a run lasts minutes, so the oldest are long over when pushed out. */
const MAX_RUNS = 500;

/**
 * How many messages each run has sent, by the run's id (its assistant
 * message). A per-run count, not a global one: a new run starts from zero.
 */
export class RunSendCounter {
  private readonly counts = new Map<string, number>();

  /** How many of the run's sends are taken. */
  used(runId: string): number {
    return this.counts.get(runId) ?? 0;
  }

  /** Takes one of the run's `limit` sends; the returned function gives it back (a send that failed). Null when none is left. */
  reserve(runId: string, limit: number): (() => void) | null {
    const used = this.counts.get(runId) ?? 0;
    if (used >= limit) return null;
    this.counts.delete(runId);
    this.counts.set(runId, used + 1);
    while (this.counts.size > MAX_RUNS) {
      const oldest = this.counts.keys().next().value as string;
      this.counts.delete(oldest);
    }
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const now = this.counts.get(runId);
      if (now) this.counts.set(runId, now - 1);
    };
  }
}

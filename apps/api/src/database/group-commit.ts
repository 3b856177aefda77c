/**
 * The scheduling of a group commit: one command out at a time, and what callers add meanwhile
 * goes out together in the next. An idle queue sends once the adding tick is done, so what that
 * tick adds goes with it; nothing ever waits for a batch to fill. `GroupedInserts`,
 * `GroupedUpdates` and `OtherJobsOfChat` share it and differ only in what a batch is (`take`) and
 * how it is sent (`send`, which answers each of its callers and never rejects).
 */
export class GroupCommit<P> {
  private queue: P[] = [];
  /** The command out: what is added meanwhile waits for it and goes together next. */
  private sending: Promise<void> | null = null;

  constructor(
    private readonly send: (batch: P[]) => Promise<void>,
    /** The next batch from the queue; returns the rest, in order, to keep queued. */
    private readonly take: (queue: readonly P[]) => { batch: P[]; rest: P[] },
  ) {}

  add(item: P): void {
    this.queue.push(item);
    if (this.queue.length === 1 && !this.sending)
      setImmediate(() => this.next());
  }

  private next(): void {
    if (this.sending || this.queue.length === 0) return;
    const { batch, rest } = this.take(this.queue);
    this.queue = rest;
    this.sending = this.send(batch).finally(() => {
      this.sending = null;
      this.next();
    });
  }
}

/** The first `max` of the queue as the batch. */
export const firstOf =
  (max: number) =>
  <P>(queue: readonly P[]): { batch: P[]; rest: P[] } => ({
    batch: queue.slice(0, max),
    rest: queue.slice(max),
  });

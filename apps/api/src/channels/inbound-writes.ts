import type { Collection, UpdateFilter } from 'mongodb';
import type { InboundMessage } from './contact-auto-reply';

interface PendingWrite {
  id: string;
  update: UpdateFilter<InboundMessage>;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Group commit for the state of stored inbound messages. Each caller still waits until its
 * own write is stored, so what is durable before a send (the answer, `sendingAt`) is exactly
 * as before. One command is in flight at a time; the writes that different contacts' queues
 * make meanwhile go out together as the next one. Nothing waits for a batch to fill: an idle
 * app writes at once, a busy one (many turns ending together) writes fewer, larger commands.
 * Per-command cost (driver, wire, the database's command handling) is what an auto-reply
 * spent most of its CPU on.
 */
export class InboundWrites {
  private batch: PendingWrite[] = [];
  /** The command in flight: writes made meanwhile wait for it and go out together next. */
  private writing: Promise<void> | null = null;

  constructor(private readonly collection: () => Collection<InboundMessage>) {}

  /**
   * `$set`/`$inc` on one stored message; resolves once stored, rejects with the database's
   * reason. A message has one write at a time (its queue awaits each), so a batch never
   * holds two writes to the same message and their order cannot matter.
   */
  update(id: string, update: UpdateFilter<InboundMessage>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.batch.push({ id, update, resolve, reject });
      if (this.batch.length === 1 && !this.writing)
        setImmediate(() => this.next());
    });
  }

  private next(): void {
    if (this.writing || this.batch.length === 0) return;
    this.writing = this.flush().finally(() => {
      this.writing = null;
      this.next();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.batch;
    this.batch = [];
    if (batch.length === 1) {
      const [only] = batch;
      try {
        await this.collection().updateOne({ _id: only.id }, only.update);
        only.resolve();
      } catch (error) {
        only.reject(error as Error);
      }
      return;
    }
    let refused = new Map<number, string>();
    try {
      // Unordered: one message's refused write does not hold back the others.
      await this.collection().bulkWrite(
        batch.map(({ id, update }) => ({
          updateOne: { filter: { _id: id }, update },
        })),
        { ordered: false },
      );
    } catch (error) {
      const writeErrors = (
        error as {
          writeErrors?: Array<{ index: number; errmsg?: string }>;
        }
      ).writeErrors;
      if (!Array.isArray(writeErrors)) {
        // Not a per-write refusal (the database is away): none is known to be stored.
        for (const write of batch) write.reject(error as Error);
        return;
      }
      refused = new Map(
        writeErrors.map((e) => [e.index, e.errmsg ?? 'write refused']),
      );
    }
    batch.forEach((write, index) => {
      const why = refused.get(index);
      if (why === undefined) write.resolve();
      else write.reject(new Error(why));
    });
  }
}

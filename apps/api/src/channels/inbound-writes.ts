import type { Collection, MatchKeysAndValues } from 'mongodb';
import type { InboundMessage } from './contact-auto-reply';

/** The fields one write sets on a stored message. */
export type InboundFields = MatchKeysAndValues<InboundMessage>;

interface PendingWrite {
  id: string;
  fields: InboundFields;
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
 *
 * Writes are `$set`s only, so a batch can be written again one by one: FerretDB stops a
 * batch at its first refused write even when unordered and reports the wrong index, so
 * after any failure nobody can tell which writes went in; each is then tried alone and its
 * caller gets its own answer.
 */
export class InboundWrites {
  private batch: PendingWrite[] = [];
  /** The command in flight: writes made meanwhile wait for it and go out together next. */
  private writing: Promise<void> | null = null;

  constructor(private readonly collection: () => Collection<InboundMessage>) {}

  /**
   * Sets fields of one stored message; resolves once stored, rejects with the database's
   * reason. A message has one write at a time (its queue awaits each), so a batch never
   * holds two writes to the same message and their order cannot matter.
   */
  set(id: string, fields: InboundFields): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.batch.push({ id, fields, resolve, reject });
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
    if (batch.length > 1) {
      try {
        await this.collection().bulkWrite(
          batch.map(({ id, fields }) => ({
            updateOne: { filter: { _id: id }, update: { $set: fields } },
          })),
          { ordered: false },
        );
        for (const write of batch) write.resolve();
        return;
      } catch {
        // Which writes went in is unknown: each is written again alone (a `$set` twice is the same).
      }
    }
    await Promise.all(batch.map((write) => this.writeAlone(write)));
  }

  private async writeAlone({
    id,
    fields,
    resolve,
    reject,
  }: PendingWrite): Promise<void> {
    try {
      await this.collection().updateOne({ _id: id }, { $set: fields });
      resolve();
    } catch (error) {
      reject(error as Error);
    }
  }
}

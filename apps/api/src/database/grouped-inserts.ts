import type { Collection, Document, OptionalUnlessRequiredId } from 'mongodb';
import { GroupCommit, firstOf } from './group-commit';

/**
 * Callers per command at most: a bound on how long one command keeps the next waiting. A turn
 * inserts two documents, so a command carries at most 20.
 */
export const MAX_INSERTS_PER_COMMAND = 10;

interface PendingInsert<T extends Document> {
  docs: T[];
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Group commit of inserts to one collection, as `GroupedUpdates` does for `$set`s: each caller
 * still waits until its own documents are stored (or refused); one command is in flight at a
 * time and the inserts made meanwhile go out together as the next one. An idle app inserts at
 * once (one command per caller, as before); twenty chats' turns starting together make two
 * commands instead of twenty. Measured on FerretDB, a turn's two messages: about 0.7 ms of the
 * database's CPU and 0.2 ms of the driver's alone, 0.2 and 0.02 ms in a command of ten turns.
 *
 * Every document must carry a new `_id` (an `ObjectId` made for it). When a grouped command
 * fails, nobody can tell which of its documents went in (FerretDB reports the wrong index even
 * for an ordered batch): the ones already stored are looked up by `_id` and count as inserted,
 * and each caller's others are inserted again alone, so each caller gets its own answer. A
 * document whose `_id` was already taken before its insert would count as inserted too: hence
 * new ids only.
 */
export class GroupedInserts<T extends Document & { _id: unknown }> {
  private readonly commands: GroupCommit<PendingInsert<T>>;

  constructor(
    private readonly collection: () => Collection<T>,
    /** Callers per command at most. */
    maxPerCommand = MAX_INSERTS_PER_COMMAND,
  ) {
    this.commands = new GroupCommit(
      (batch) => this.flush(batch),
      firstOf(maxPerCommand),
    );
  }

  /** Inserts `docs` in order; resolves once all are stored, rejects with the database's reason. */
  insert(docs: readonly T[]): Promise<void> {
    if (!docs.length) return Promise.resolve();
    return new Promise<void>((resolve, reject) =>
      this.commands.add({ docs: [...docs], resolve, reject }),
    );
  }

  private async flush(batch: Array<PendingInsert<T>>): Promise<void> {
    try {
      await this.collection().insertMany(
        batch.flatMap(({ docs }) => docs) as OptionalUnlessRequiredId<T>[],
      );
      for (const insert of batch) insert.resolve();
      return;
    } catch (error) {
      if (batch.length === 1) {
        batch[0].reject(error as Error);
        return;
      }
    }
    let stored: Set<string>;
    try {
      stored = await this.storedIds(batch);
    } catch (error) {
      for (const insert of batch) insert.reject(error as Error);
      return;
    }
    await Promise.all(
      batch.map(async ({ docs, resolve, reject }) => {
        const missing = docs.filter((doc) => !stored.has(idKey(doc._id)));
        try {
          if (missing.length)
            await this.collection().insertMany(
              missing as OptionalUnlessRequiredId<T>[],
            );
          resolve();
        } catch (error) {
          reject(error as Error);
        }
      }),
    );
  }

  /** The ids of the batch's documents the database has (after a grouped command failed). */
  private async storedIds(
    batch: Array<PendingInsert<T>>,
  ): Promise<Set<string>> {
    const ids = batch.flatMap(({ docs }) => docs.map((doc) => doc._id));
    const found = await this.collection()
      .find({ _id: { $in: ids } } as object, { projection: { _id: 1 } })
      .toArray();
    return new Set(found.map((doc) => idKey(doc._id)));
  }
}

/** An `_id` as a set key: an ObjectId by its hex, anything else by its JSON. */
function idKey(id: unknown): string {
  return typeof (id as { toHexString?: unknown })?.toHexString === 'function'
    ? (id as { toHexString(): string }).toHexString()
    : JSON.stringify(id);
}

import type { Collection, Document, Filter, UpdateFilter } from 'mongodb';
import { updateEach } from './driver-collection';
import { GroupCommit } from './group-commit';

/**
 * Updates per command at most: a bound on how long one command keeps the next waiting. Upstream
 * FerretDB 1.24 kept every statement's query open until the whole `update` command ended, each on
 * one of its 100 SQLite connections per database, so a command of about 100 never finished and
 * every later command waited behind it (the WhatsApp bench hung so); the cap was 10 for that. The
 * launcher's patch (tools/ferretdb/patches/update-held-writes.patch) closes each query when its
 * statement ends and writes a command's documents in one transaction: the database's CPU a
 * statement is 0.34 ms at 10 a command, 0.24-0.32 ms at 50 (0.78-0.83 ms alone).
 */
export const MAX_UPDATES_PER_COMMAND = 50;

interface PendingUpdate<T extends Document> {
  key: string;
  filter: Filter<T>;
  set: UpdateFilter<T>['$set'];
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Group commit of `$set` updates to one collection. Each caller still waits until its own
 * write is stored (or refused), so what a caller relies on being durable is exactly as with
 * its own `updateOne`. One command is in flight at a time; the writes made meanwhile (by
 * other contacts' turns, other chats' replies) go out together as the next one. Nothing
 * waits for a batch to fill: an idle app writes at once, a busy one writes fewer, larger
 * commands. Per-command cost (driver, wire, the database's command handling) is what a busy
 * auto-reply spent most of its CPU on.
 *
 * Writes are `$set`s only, so a batch can be written again one by one: FerretDB stops a
 * batch at its first refused write even when unordered and reports the wrong index, so
 * after any failure nobody can tell which writes went in; each is then tried alone and its
 * caller gets its own answer. Two writes to the same document (same `key`) never share a
 * batch: the later one waits for the next, so their order holds even when written alone.
 */
export class GroupedUpdates<T extends Document> {
  private readonly commands = new GroupCommit<PendingUpdate<T>>(
    (batch) => this.flush(batch),
    take,
  );

  constructor(private readonly collection: () => Collection<T>) {}

  /**
   * Sets `fields` on the document `filter` matches (at most one; none is not an error);
   * `key` names that document. Resolves once stored, rejects with the database's reason.
   */
  set(
    key: string,
    filter: Filter<T>,
    fields: UpdateFilter<T>['$set'],
  ): Promise<void> {
    return new Promise<void>((resolve, reject) =>
      this.commands.add({ key, filter, set: fields, resolve, reject }),
    );
  }

  private async flush(batch: Array<PendingUpdate<T>>): Promise<void> {
    if (batch.length > 1) {
      try {
        await updateEach(this.collection(), batch);
        for (const write of batch) write.resolve();
        return;
      } catch {
        // Which writes went in is unknown: each is written again alone (a `$set` twice is the same).
      }
    }
    await Promise.all(batch.map((write) => this.writeAlone(write)));
  }

  private async writeAlone({
    filter,
    set,
    resolve,
    reject,
  }: PendingUpdate<T>): Promise<void> {
    try {
      await this.collection().updateOne(filter, {
        $set: set,
      } as UpdateFilter<T>);
      resolve();
    } catch (error) {
      reject(error as Error);
    }
  }
}

/** The queued writes, at most one per document and MAX_UPDATES_PER_COMMAND; the others stay queued, in order. */
function take<W extends { key: string }>(
  queue: readonly W[],
): { batch: W[]; rest: W[] } {
  const keys = new Set<string>();
  const batch: W[] = [];
  const rest: W[] = [];
  for (const write of queue) {
    if (keys.has(write.key) || batch.length >= MAX_UPDATES_PER_COMMAND)
      rest.push(write);
    else {
      keys.add(write.key);
      batch.push(write);
    }
  }
  return { batch, rest };
}

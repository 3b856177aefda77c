import type { Logger } from '@nestjs/common';
import type { Types } from 'mongoose';
import type { GroupedUpdates } from '../database/grouped-updates';
import type { ChatRecord } from './schemas/chat.schema';

/** A chat's activity time alone is written at most this often; a crash loses at most this much of it. */
export const ACTIVITY_WRITE_INTERVAL_MS = 60_000;

interface UnsavedActivity {
  id: Types.ObjectId;
  at: Date;
}

/**
 * The turns' writes of their chat documents. A turn that changes only the chat's activity time
 * (`updatedAt`, the chat list's order and time) writes it at once when the chat's time was not
 * written in the last interval, and otherwise leaves it to one write at the end of the interval:
 * a conversation costs one chat write a minute instead of one per turn (each its own SQLite
 * transaction and fsync in FerretDB). The chat list in memory has the new time at once; what the
 * database may lack is the last interval's time, written when the app stops, so only a crash leaves
 * a chat's stored time up to an interval old. A turn that renames the chat or changes its mode or
 * account writes at once, as before.
 *
 * A late write only moves the time forward (a rename's newer time stays). It can come at any
 * moment beside a turn's own write, the owner's rename, pin or mode switch, a version's mark or a
 * call transcript: FerretDB rewrites the whole document on update, so two writes at once would
 * lose one, and every write of a chat (this one too, through `writes`) goes through ChatWrites,
 * which runs them one after another.
 */
export class ChatActivity {
  /** When each chat's activity time was last written (monotonic ms): the next within the interval waits. */
  private readonly writtenAt = new Map<string, number>();
  private readonly unsaved = new Map<string, UnsavedActivity>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    /** The chat's writes, each after the one before it (ChatWrites): a late write never meets another. */
    private readonly writes: Pick<GroupedUpdates<ChatRecord>, 'set'>,
    private readonly logger: Logger,
    private readonly intervalMs = ACTIVITY_WRITE_INTERVAL_MS,
  ) {}

  /**
   * Stores a turn's change of its chat document (`updatedAt` and any other field). Resolves once
   * written, or at once when the write waits for the end of the interval; never rejects.
   */
  async record(id: Types.ObjectId, fields: Partial<ChatRecord>): Promise<void> {
    const key = id.toHexString();
    const now = performance.now();
    const last = this.writtenAt.get(key);
    const onlyTime =
      fields.updatedAt !== undefined && Object.keys(fields).length === 1;
    if (onlyTime && last !== undefined && now - last < this.intervalMs) {
      this.unsaved.set(key, { id, at: fields.updatedAt as Date });
      this.timer ??= setTimeout(
        () => void this.writeUnsaved(),
        this.intervalMs,
      );
      this.timer.unref();
      return;
    }
    this.unsaved.delete(key);
    this.writtenAt.set(key, now);
    await this.writes
      .set(key, { _id: id }, fields)
      .catch((error: Error) =>
        this.logger.warn(`Could not update the chat: ${error.message}`),
      );
    this.writeEnded(key);
  }

  /**
   * The interval runs from a write's end: a write that took longer than the interval (a busy
   * database) does not make the next turn's time a write of its own. Its start is marked too, so
   * two turns at once make one write; a chat forgotten meanwhile stays forgotten.
   */
  private writeEnded(key: string): void {
    if (this.writtenAt.has(key)) this.writtenAt.set(key, performance.now());
  }

  /** Writes every activity time not written yet (the end of an interval; the app stopping). */
  async writeUnsaved(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const writes: Promise<void>[] = [];
    const now = performance.now();
    for (const [key, { id, at }] of this.unsaved) {
      this.unsaved.delete(key);
      this.writtenAt.set(key, now);
      writes.push(
        this.writes
          .set(key, { _id: id, updatedAt: { $lt: at } }, { updatedAt: at })
          .catch((error: Error) =>
            this.logger.warn(
              `Could not store a chat's activity time: ${error.message}`,
            ),
          )
          .then(() => this.writeEnded(key)),
      );
    }
    // Chats written long ago need no entry: their next turn writes at once anyway.
    for (const [key, at] of this.writtenAt)
      if (now - at >= this.intervalMs && !this.unsaved.has(key))
        this.writtenAt.delete(key);
    await Promise.all(writes);
  }

  /** A restored backup replaced the chats: their own times stand. */
  forget(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.unsaved.clear();
    this.writtenAt.clear();
  }
}

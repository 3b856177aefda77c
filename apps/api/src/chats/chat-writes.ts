import type { Collection, Filter, UpdateFilter } from 'mongodb';
import type { Types } from 'mongoose';
import { GroupedUpdates } from '../database/grouped-updates';
import { KeyedSerial } from '../database/keyed-serial';
import type { ChatRecord } from './schemas/chat.schema';

/**
 * The one way to write a chat document: every write of one chat (a turn's activity time or title,
 * the activity time written late by ChatActivity, a rename, pin or archive, a mode or account
 * switch, a version's mark, a call transcript's time, a delete) waits for the one before it.
 * FerretDB 1.24 rewrites the whole document on update, so two writes of one chat at the same
 * moment lose one of them (a `$set` of the title and one of `updatedAt` started together: the
 * later write puts back the other field's old value). Writes of different chats still run at
 * once, and a write that meets no other write of its chat starts in its caller's tick: a turn's
 * path gains no command and no wait. On real MongoDB (MONGODB_URI) the order is merely kept.
 *
 * In process only: one API process owns the database (the data-dir lock).
 */
export class ChatWrites {
  private readonly serial = new KeyedSerial();
  /** The turns' `$set`s, group-committed with other chats' turns running meanwhile. */
  private readonly grouped: GroupedUpdates<ChatRecord>;

  constructor(collection: () => Collection<ChatRecord>) {
    this.grouped = new GroupedUpdates(collection);
  }

  /** A group-committed `$set` of the chat `key` (its id in hex); as `GroupedUpdates#set`. */
  set(
    key: string,
    filter: Filter<ChatRecord>,
    fields: UpdateFilter<ChatRecord>['$set'],
  ): Promise<void> {
    return this.serial.run(key, () => this.grouped.set(key, filter, fields));
  }

  /** Any other write of the chat `id` (`write` makes exactly that chat's command), once the ones before it are done. */
  run<T>(id: Types.ObjectId, write: () => Promise<T>): Promise<T> {
    return this.serial.run(id.toHexString(), write);
  }
}

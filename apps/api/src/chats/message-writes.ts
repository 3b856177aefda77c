import type { Collection, Filter, UpdateFilter } from 'mongodb';
import { GroupedInserts } from '../database/grouped-inserts';
import { GroupedUpdates } from '../database/grouped-updates';
import type { MessageRecord } from './schemas/message.schema';

/**
 * The turns' writes of messages, group-committed with the other chats' turns running meanwhile:
 * a turn's two new messages (`insert`), its reply as it grows and ends, a reply's delivery mark
 * (`set`). One turn alone makes the commands it made before, in its caller's next tick; twenty
 * starting or ending together share two or three. Through the driver: the documents are plain
 * objects, nothing for mongoose to cast.
 */
export class MessageWrites {
  private readonly inserts: GroupedInserts<MessageRecord>;
  private readonly updates: GroupedUpdates<MessageRecord>;

  constructor(collection: () => Collection<MessageRecord>) {
    this.inserts = new GroupedInserts(collection);
    this.updates = new GroupedUpdates(collection);
  }

  /** Stores new messages (each with a new `_id`); as `GroupedInserts#insert`. */
  insert(records: readonly MessageRecord[]): Promise<void> {
    return this.inserts.insert(records);
  }

  /**
   * A `$set` of the message `key` (its id in hex); as `GroupedUpdates#set`: two writes of one
   * message never share a command, the later one lands after.
   */
  set(
    key: string,
    filter: Filter<MessageRecord>,
    fields: UpdateFilter<MessageRecord>['$set'],
  ): Promise<void> {
    return this.updates.set(key, filter, fields);
  }
}

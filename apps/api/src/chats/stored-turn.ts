import type { MessageRecord } from './schemas/message.schema';

/**
 * An in-process event (never sent to the console: it is not one of the app's events) emitted
 * just before a reply's `chats.changed` `reply-ended`: the turn's messages as stored, so the
 * memory index puts them without reading them back from the database.
 */
export const TURN_STORED = 'chats.turn-stored';

export interface StoredTurn {
  chatId: string;
  messages: Array<
    Pick<MessageRecord, '_id' | 'role' | 'content' | 'createdAt' | 'hiddenWith'>
  >;
}

import { Types } from 'mongoose';

/** A finished message to seed: its chat, its time, and any stored field (`role`, `content`, `author`, `parts`, …). */
export interface SeedMessage {
  chatId: Types.ObjectId | string;
  /** `createdAt` and `updatedAt`. */
  at: Date | number;
  /** A given id (one made for `at`, say); a new one otherwise. */
  _id?: Types.ObjectId;
  role?: 'user' | 'assistant';
  content?: string;
  [field: string]: unknown;
}

/** A `messages` document as the chats module stores a finished message. */
export interface MessageDoc {
  _id: Types.ObjectId;
  chatId: Types.ObjectId;
  status: 'complete';
  error: null;
  model: null;
  usage: null;
  createdAt: Date;
  updatedAt: Date;
  [field: string]: unknown;
}

/**
 * A finished message's document, for specs and benches that write messages straight into the
 * database (thousands of them, or at a given date) instead of running a turn for each. The fields
 * given override the finished-message defaults (`status: 'error'`, a `model`, …).
 */
export function messageDoc({
  chatId,
  at,
  _id,
  ...fields
}: SeedMessage): MessageDoc {
  const date = new Date(at);
  return {
    _id: _id ?? new Types.ObjectId(),
    chatId: typeof chatId === 'string' ? new Types.ObjectId(chatId) : chatId,
    status: 'complete',
    error: null,
    model: null,
    usage: null,
    createdAt: date,
    updatedAt: date,
    ...fields,
  };
}

/** A mongoose `Connection` or the driver's `Db`: both give the `messages` collection. */
export interface MessageStore {
  collection(name: 'messages'): {
    insertOne(doc: MessageDoc): Promise<unknown>;
  };
}

/** Writes one finished message (`messageDoc`) and gives its id. */
export async function seedMessage(
  db: MessageStore,
  seed: SeedMessage,
): Promise<string> {
  const doc = messageDoc(seed);
  await db.collection('messages').insertOne(doc);
  return doc._id.toHexString();
}

import type { TurnSource } from '../llm/turn-source';
import type { MongoDocument, MongoOperation } from './mongo-operation';

export type SandboxResult = Record<string, unknown>;

/** The turn a `db_query` call comes from (absent when code outside a turn calls the sandbox). */
export interface SandboxCaller {
  source: TurnSource;
  chatId: string | null;
  messageId: string | null;
}

/**
 * App-owned collections the AI may write, but only through their feature's
 * service (same checks as its tool; the fields the app owns stay the app's).
 * With no owner loaded, AI writes to them are refused.
 */
export const DELEGATED_WRITE_COLLECTIONS: ReadonlySet<string> = new Set([
  'cronjobs',
]);

/**
 * Collections the AI reads only through a read scope: every read path (filter,
 * pipeline, join) is narrowed by the scope's filter. With no scope loaded, the
 * AI sees none of their documents. (A feature may also scope another collection
 * by providing a SandboxReadScope for it; that one is narrowed only while the
 * provider is loaded.)
 */
export const SCOPED_READ_COLLECTIONS: ReadonlySet<string> = new Set([
  'whatsapp_messages',
  'telegram_messages',
  // Notes are read and written through the memory tools only: a db_query write would skip provenance and trust.
  'memories',
  'memory_runs',
  // The memory index's snapshot token: a write would only force a full re-read at the next start.
  'memory_index',
  // Vectors of notes and messages (some of contacts' chats): derived data, read by memory_search only.
  'memory_embeddings',
]);

/** Provided by the feature owning a collection of DELEGATED_WRITE_COLLECTIONS. */
export abstract class SandboxCollectionWriter {
  abstract readonly collection: string;
  /** A checked insert/update/delete on `collection`; answers in db_query's shapes or throws a message for the model. */
  abstract write(
    op: MongoOperation,
    caller: SandboxCaller | undefined,
  ): Promise<SandboxResult>;
}

/** Provided by the feature owning a collection of SCOPED_READ_COLLECTIONS. */
export abstract class SandboxReadScope {
  abstract readonly collection: string;
  /** The filter every AI read of `collection` is narrowed by (read fresh for each call). */
  abstract visibleFilter(): Promise<MongoDocument>;
}

/** Matches no document: what a scoped collection shows when nobody provides its scope. */
export const NOTHING_VISIBLE: MongoDocument = { _id: { $in: [] } };

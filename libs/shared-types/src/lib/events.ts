import type { DatabaseStatus } from './system';

/**
 * Every event the server publishes on its bus and streams on `GET /api/events`.
 * The SSE `event:` field is the key; `data:` is the JSON payload.
 */
export interface AppEventMap {
  'database.status': { status: DatabaseStatus; reason?: string; at: string };
  'auth.logged_out': { at: string };
  /** A chat was created, renamed, deleted, or a reply in it started or ended. */
  'chats.changed': { chatId: string; change: 'created' | 'renamed' | 'deleted' | 'reply-started' | 'reply-ended'; at: string };
  /** Core instruction, memory, schema doc or the toggle changed (`by: "ai"` when a tool did it). */
  'system-instruction.updated': { updatedAt: string; by: 'owner' | 'ai' };
  'settings.updated': { updatedAt: string };
  /** The AI wrote to one of its collections through `db_query`. */
  'data.changed': { collection: string; operation: string; at: string };
}

export type AppEventName = keyof AppEventMap;

export const APP_EVENT_NAMES: readonly AppEventName[] = [
  'database.status',
  'auth.logged_out',
  'chats.changed',
  'system-instruction.updated',
  'settings.updated',
  'data.changed',
];

/** Sent every 25 s on the events stream so proxies and browsers keep it open. */
export const EVENTS_HEARTBEAT_EVENT = 'heartbeat';

import type { DatabaseStatus } from './system';

/**
 * Every event the server publishes on its bus and streams on `GET /api/events`.
 * The SSE `event:` field is the key; `data:` is the JSON payload.
 */
export interface AppEventMap {
  'database.status': { status: DatabaseStatus; reason?: string; at: string };
  'auth.logged_out': { at: string };
}

export type AppEventName = keyof AppEventMap;

export const APP_EVENT_NAMES: readonly AppEventName[] = ['database.status', 'auth.logged_out'];

/** Sent every 25 s on the events stream so proxies and browsers keep it open. */
export const EVENTS_HEARTBEAT_EVENT = 'heartbeat';

import type { CronRunView } from './automations';
import type { BudgetChangedEvent } from './budget';
import type { DatabaseStatus } from './system';
import type { TelegramStatus } from './telegram';
import type {
  BufferedMessage,
  WhatsAppLinkProblem,
  WhatsAppStatus,
} from './whatsapp';

/**
 * Every event the server publishes on its bus and streams on `GET /api/events`.
 * The SSE `event:` field is the key; `data:` is the JSON payload.
 */
export interface AppEventMap {
  'database.status': { status: DatabaseStatus; reason?: string; at: string };
  'auth.logged_out': { at: string };
  /**
   * A chat was created, renamed, updated (pinned, archived, its model), deleted, a reply in it started or
   * ended, or a voice call in it stored words (`transcript`).
   */
  'chats.changed': {
    chatId: string;
    change:
      | 'created'
      | 'renamed'
      | 'updated'
      | 'deleted'
      | 'reply-started'
      | 'reply-ended'
      | 'delivery'
      | 'mode'
      | 'transcript'
      | 'versions';
    at: string;
    /** `mode` changes: the new mode. */
    mode?: string;
    /**
     * `reply-started` / `reply-ended`: the turn's user and assistant message ids (the memory index reads them);
     * `versions` (another version shown): the messages that left or joined the shown path.
     */
    messageIds?: string[];
  };
  /** Core instruction, memory, schema doc or the toggle changed (`by: "ai"` when a tool did it). */
  'system-instruction.updated': { updatedAt: string; by: 'owner' | 'ai' };
  'settings.updated': { updatedAt: string };
  /** The AI wrote to one of its collections through `db_query`. */
  'data.changed': { collection: string; operation: string; at: string };
  /**
   * A scheduled job was created, edited, paused/resumed or deleted (`by: "ai"` when manage_cronjob or
   * db_query did it); `by: "app"` when only the watch of a mail-triggered job changed state.
   */
  'cronjobs.changed': {
    jobId: string;
    change: 'created' | 'updated' | 'deleted';
    by: 'owner' | 'ai' | 'app';
    at: string;
  };
  /** A job run or a pulse started (`outcome: "running"`) or ended; also sent for skipped and missed runs. */
  'automation.run': { run: CronRunView; at: string };
  /** Pulse settings, notes or counters changed. */
  'pulse.updated': { by: 'owner' | 'ai' | 'schedule'; at: string };
  /**
   * The Pulse document was written (settings, notes, counters, or the scheduler's own slot
   * bookkeeping, which `pulse.updated` does not announce); the scheduler plans the next pulse on it.
   */
  'pulse.saved': { at: string };
  /** A pulse began: its run and the Pulse chat it writes to. */
  'pulse.fired': { runId: string; chatId: string; at: string };
  /**
   * A WhatsApp permission was created, edited or deleted (`by: "ai"` when
   * whatsapp_manage_permission did it, `"auto-reply"` when the bot-loop guard paused the contact).
   */
  'whatsapp.permissions.changed': {
    id: string;
    change: 'created' | 'updated' | 'deleted';
    by: 'owner' | 'ai' | 'auto-reply';
    at: string;
  };
  /** The WhatsApp link changed state (`reason` says why it stopped: logged out, forbidden…). */
  'whatsapp.status': {
    status: WhatsAppStatus;
    phoneNumber: string | null;
    reason: string | null;
    /** `reason` as a code the console puts in words. */
    problem?: WhatsAppLinkProblem | null;
    at: string;
  };
  /** A new QR code to scan (PNG data URL, 256×256). */
  'whatsapp.qr': { qr: string; at: string };
  /** A WhatsApp message was received and stored (sent once per message id). */
  'whatsapp.message': { message: BufferedMessage; at: string };
  /** The Telegram bot's polling changed state. */
  'telegram.status': {
    status: TelegramStatus;
    username: string | null;
    reason: string | null;
    at: string;
  };
  /** A Telegram message was received and stored (once per message). */
  'telegram.message': { id: string; chatId: string; at: string };
  /**
   * The auto-reply's state of a stored inbound message changed on a channel (answered, skipped, failed, held
   * back): lists of recent messages reload without waiting for the next message.
   */
  'channels.inbound': {
    channel: 'whatsapp' | 'telegram';
    /** The stored message's id. */
    id: string;
    /** `pending`, `working`, `done`, `skipped`, `stale` or `failed`. */
    processing: string;
    at: string;
  };
  /** A Telegram permission was created, edited or deleted. */
  'telegram.permissions.changed': {
    id: string;
    change: 'created' | 'updated' | 'deleted';
    by: 'owner' | 'ai' | 'auto-reply';
    at: string;
  };
  /** An email or calendar account was added, edited or removed (never carries a secret). */
  'accounts.changed': {
    id: string;
    change: 'created' | 'updated' | 'deleted';
    at: string;
  };
  /** An email draft waiting for approval was created, edited, sent, failed to send or was discarded. */
  'drafts.changed': {
    id: string;
    change: 'created' | 'updated' | 'sent' | 'failed' | 'discarded';
    at: string;
  };
  /** A pending action was made, edited, approved (then done or failed), discarded or expired. */
  'actions.changed': {
    id: string;
    change: 'created' | 'updated' | 'done' | 'failed' | 'discarded' | 'expired';
    chatId: string | null;
    at: string;
  };
  /** A backup was restored over this instance's data: caches are dropped and the console reloads. */
  /** `secrets` as in the restore's answer: whether the backup's keys are in use or this instance's were kept (absent after a recovered restore). */
  'backup.restored': { at: string; secrets?: 'restored' | 'kept' };
  /** A memory note was written, edited, approved or forgotten (`by: "consolidation"` for the nightly run). */
  'memories.changed': {
    id: string;
    change: 'created' | 'updated' | 'deleted';
    by: 'owner' | 'ai' | 'consolidation';
    at: string;
  };
  /** The server is stopping: the last event of every event stream, which then ends. */
  shutdown: { at: string };
  /** An MCP server was added, edited, deleted, changed status or tools (never carries a secret). */
  'mcp.changed': {
    id: string;
    name: string;
    change: 'created' | 'updated' | 'deleted' | 'status' | 'tools';
    state: 'connecting' | 'ready' | 'error' | 'stopped' | 'needs-sign-in';
    at: string;
  };
  /** A budget cap reached 80% or 100%, the caps changed, or unattended work was paused or resumed. */
  'budget.changed': BudgetChangedEvent;
}

export type AppEventName = keyof AppEventMap;

export const APP_EVENT_NAMES: readonly AppEventName[] = [
  'database.status',
  'auth.logged_out',
  'chats.changed',
  'system-instruction.updated',
  'settings.updated',
  'data.changed',
  'cronjobs.changed',
  'automation.run',
  'pulse.updated',
  'pulse.saved',
  'pulse.fired',
  'whatsapp.permissions.changed',
  'whatsapp.status',
  'whatsapp.qr',
  'whatsapp.message',
  'telegram.status',
  'telegram.message',
  'telegram.permissions.changed',
  'channels.inbound',
  'accounts.changed',
  'drafts.changed',
  'actions.changed',
  'backup.restored',
  'memories.changed',
  'budget.changed',
  'mcp.changed',
  'shutdown',
];

/** Sent every 25 s on the events stream so proxies and browsers keep it open. */
export const EVENTS_HEARTBEAT_EVENT = 'heartbeat';

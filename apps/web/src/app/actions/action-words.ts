import { HttpErrorResponse } from '@angular/common/http';
import type {
  ActionSource,
  PendingActionView,
  TaintMark,
} from '@metatronos/shared-types';
import { words } from '../chat/tool-labels';
import { inlineErrorMessage } from '../core/server-problem';

/** What a waiting call would do, in words (imperative: the owner is asked to let it happen). */
const ACTION_LABELS: Record<string, string> = {
  whatsapp_send_message: 'Send a WhatsApp message',
  contacts_send: 'Send a message to a contact',
  telegram_send_file: 'Send a file on Telegram',
  telegram_send_voice: 'Send a voice message on Telegram',
  telegram_react: 'React to a message on Telegram',
  whatsapp_manage_permission: 'Change a WhatsApp permission',
  telegram_manage_permission: 'Change a Telegram permission',
  manage_cronjob: 'Change a scheduled job',
  manage_pulse: 'Change the Pulse settings',
  save_memory: 'Save to memory',
  remember: 'Remember something',
  forget: 'Forget a memory',
  url_fetch: 'Send a request to a web address',
  write_file: 'Write a file',
  bash: 'Run a command',
};

const EMAIL_LABELS: Record<string, string> = {
  send: 'Send an email',
  reply: 'Reply to an email',
  forward: 'Forward an email',
  move: 'Move an email',
  delete: 'Delete an email',
};

const CALENDAR_LABELS: Record<string, string> = {
  create: 'Add a calendar event',
  update: 'Change a calendar event',
  delete: 'Delete a calendar event',
};

/** "Send a WhatsApp message", "Delete a calendar event"; unknown tools: "Use some tool". */
export function actionLabel(
  tool: string,
  args: Record<string, unknown> = {},
): string {
  const action = typeof args['action'] === 'string' ? args['action'] : '';
  if (tool === 'email_actions') return EMAIL_LABELS[action] ?? 'Change emails';
  if (tool === 'calendar_actions')
    return CALENDAR_LABELS[action] ?? 'Change the calendar';
  return ACTION_LABELS[tool] ?? `Use ${words(tool)}`;
}

const SOURCE_LABELS: Record<ActionSource, string> = {
  chat: 'Chat',
  cron: 'Scheduled job',
  pulse: 'Pulse',
  'auto-reply': 'Auto-reply',
  voice: 'Voice call',
  mcp: 'Connected agent',
  memory: 'Memory upkeep',
};

/** Where the turn came from: "Chat", "Job “Morning briefing”", "Pulse", "Auto-reply". */
export function actionSourceLabel(
  action: Pick<PendingActionView, 'source' | 'jobId'>,
  jobNames: ReadonlyMap<string, string> = new Map(),
): string {
  const job = action.jobId ? jobNames.get(action.jobId) : undefined;
  if (job) return `Job “${job}”`;
  return SOURCE_LABELS[action.source] ?? words(action.source);
}

/** The mark of a turn that read third-party content: "read third-party content: a web page from example.org". */
export function taintText(marks: readonly TaintMark[]): string {
  const seen = [...new Set(marks.map((mark) => mark.text).filter(Boolean))];
  return seen.length
    ? `read third-party content: ${seen.join('; ')}`
    : 'read third-party content';
}

/** A failed approve, edit or discard, in words; 409 and 404 say the action no longer waits. */
export function actionErrorMessage(error: unknown, fallback: string): string {
  const status = error instanceof HttpErrorResponse ? error.status : 0;
  const said = inlineErrorMessage(error, '');
  if (status === 409)
    return said
      ? `This action no longer waits: ${lowerFirst(said)}`
      : 'This action no longer waits: it was approved, discarded or expired already.';
  if (status === 404)
    return 'This action no longer exists: it was removed or has expired.';
  return said || fallback;
}

function lowerFirst(text: string): string {
  const sentence = /[.!?]$/.test(text) ? text : `${text}.`;
  return sentence.charAt(0).toLowerCase() + sentence.slice(1);
}

/** One argument that differs between the stored call and the owner's edit. */
export interface ArgumentChange {
  key: string;
  before: string;
  after: string;
}

/** What an edit changes, key by key (added, removed or different), in the order of the edited arguments. */
export function argumentChanges(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): ArgumentChange[] {
  const keys = [...new Set([...Object.keys(after), ...Object.keys(before)])];
  return keys.flatMap((key) => {
    const was = shown(before[key]);
    const now = shown(after[key]);
    return was === now ? [] : [{ key, before: was, after: now }];
  });
}

function shown(value: unknown): string {
  if (value === undefined) return '(none)';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

import type {
  MemorySource,
  MessageAuthor,
  MessageTrigger,
} from '@metatronos/shared-types';

/** Tools whose results never carry someone else's words: a turn that called only these is the owner's. */
const CLEAN_TOOLS: ReadonlySet<string> = new Set([
  'set_mode',
  'select_account',
  'save_memory',
  'remember',
  'forget',
  'update_db_schema',
  'manage_cronjob',
  'manage_pulse',
  'generate_image',
  'edit_image',
  'write_file',
  'plan_create',
  'todo_update',
]);

/** Where the text of a tool's result comes from, for a note the turn proposes. */
function sourceOfTool(name: string): MemorySource {
  if (name === 'url_fetch' || name === 'web_search') return 'web';
  if (name === 'email_actions') return 'email';
  if (name.startsWith('whatsapp_') || name.startsWith('telegram_'))
    return 'contact';
  return 'tool';
}

/** A tool call of the turn so far, as stored with the reply. */
export interface TurnToolCall {
  name: string;
  result: string | null;
  taint?: unknown;
}

/**
 * The third-party source a turn has read so far, or null when it read none: any
 * tool outside CLEAN_TOOLS (or marked tainted) counts, except a memory_search
 * that found no contact's text.
 */
export function turnThirdPartySource(
  calls: readonly TurnToolCall[],
): MemorySource | null {
  for (const call of calls) {
    if (call.name === 'memory_search') {
      if (call.result?.includes('"source":"contact"')) return 'contact';
      continue;
    }
    if (call.taint || !CLEAN_TOOLS.has(call.name))
      return sourceOfTool(call.name);
  }
  return null;
}

/** Who wrote a stored message, as a note's source. */
export function sourceOfMessage(message: {
  role: 'user' | 'assistant';
  author?: MessageAuthor | null;
  trigger?: MessageTrigger;
}): MemorySource {
  if (message.role === 'user' && !message.author && !message.trigger)
    return 'owner';
  if (message.author) return 'contact';
  return 'tool';
}

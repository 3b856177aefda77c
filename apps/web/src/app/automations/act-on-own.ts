import type { ModeView } from '@metatronos/shared-types';
import { words } from '../chat/tool-labels';

/**
 * The tools a job's owner can let it use on its own: they send to people, delete or move. Without that,
 * each such call in an unattended run waits on the Pending actions page. Tools that grant or change
 * permissions are never offered to a job, so they are not here.
 */
export const ACT_ON_OWN_LABELS: Readonly<Record<string, string>> = {
  whatsapp_send_message: 'Send WhatsApp messages',
  contacts_send: 'Send messages to contacts',
  telegram_send_file: 'Send files on Telegram',
  telegram_send_voice: 'Send voice messages on Telegram',
  telegram_react: 'React to Telegram messages',
  email_actions: 'Send, reply to, move and delete emails',
  calendar_actions: 'Change and delete calendar events',
};

export function actOnOwnLabel(tool: string): string {
  return ACT_ON_OWN_LABELS[tool] ?? words(tool);
}

/** The sending and deleting tools of `mode` (from `GET /api/tools`), then those already chosen that it lacks. */
export function actOnOwnChoices(
  modes: readonly ModeView[],
  mode: string,
  chosen: ReadonlySet<string>,
): string[] {
  const offered = (modes.find((m) => m.name === mode)?.tools ?? [])
    .map((tool) => tool.name)
    .filter((name) => name in ACT_ON_OWN_LABELS);
  return [...new Set([...offered, ...chosen])];
}

/**
 * The modes as the owner reads them. The server's descriptions are written for the model (they go in its
 * prompt); the console says what a mode is for in the owner's words, and names brands as they are spelt.
 */
const MODE_NAMES: Record<string, string> = {
  default: 'Default',
  whatsapp: 'WhatsApp',
  telegram: 'Telegram',
  email: 'Email',
  calendar: 'Calendar',
  contacts: 'Contacts',
  web: 'Web',
  data: 'Data',
  media: 'Images',
  files: 'Files',
  automations: 'Automations',
};

const MODE_DESCRIPTIONS: Record<string, string> = {
  default: 'Everyday help and your memory. Every chat starts here.',
  web: 'Searches the web and reads pages for you.',
  data: 'Looks up and changes your own data (contacts, schedule, notes).',
  media: 'Creates and edits images.',
  files: 'Reads and writes files, and runs commands in a sandbox.',
  whatsapp: 'Reads and sends WhatsApp messages, and manages who may write.',
  telegram: 'Sends messages, files and reactions on Telegram.',
  email: 'Reads, searches and drafts email in your accounts.',
  calendar: 'Reads and changes your calendars.',
  contacts: 'Sends a message to one of your contacts on any channel.',
  automations: 'Scheduled jobs and the Pulse check-ins.',
};

/** "whatsapp" → "WhatsApp mode", an unknown "some_mode" → "Some mode mode". */
export function modeLabel(mode: string): string {
  const known = MODE_NAMES[mode];
  if (known) return `${known} mode`;
  const words = mode.replace(/_/g, ' ');
  return `${words.charAt(0).toUpperCase()}${words.slice(1)} mode`;
}

/** What the mode is for, in the owner's words; the server's own line for a mode the console does not know. */
export function modeDescription(
  mode: string,
  serverDescription: string,
): string {
  return MODE_DESCRIPTIONS[mode] ?? serverDescription;
}

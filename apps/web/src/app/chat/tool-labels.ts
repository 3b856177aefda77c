/** What a tool call did, in words: [when done, while running]. */
const TOOL_LABELS: Record<string, readonly [string, string]> = {
  web_search: ['Searched the web', 'Searching the web'],
  url_fetch: ['Fetched a web page', 'Fetching a web page'],
  db_query: ['Queried the database', 'Querying the database'],
  update_db_schema: [
    'Updated the database notes',
    'Updating the database notes',
  ],
  save_memory: ['Saved to memory', 'Saving to memory'],
  confirm_action: ['Did what you said yes to', 'Doing what you said yes to'],
  generate_image: ['Generated an image', 'Generating an image'],
  edit_image: ['Edited an image', 'Editing an image'],
  whatsapp_read_messages: [
    'Read WhatsApp messages',
    'Reading WhatsApp messages',
  ],
  whatsapp_send_message: [
    'Sent a WhatsApp message',
    'Sending a WhatsApp message',
  ],
  whatsapp_manage_permission: [
    'Changed a WhatsApp permission',
    'Changing a WhatsApp permission',
  ],
  whatsapp_list_permissions: [
    'Listed WhatsApp permissions',
    'Listing WhatsApp permissions',
  ],
  manage_cronjob: ['Managed a scheduled job', 'Managing a scheduled job'],
  manage_pulse: ['Changed the Pulse settings', 'Changing the Pulse settings'],
  read_file: ['Read a file', 'Reading a file'],
  write_file: ['Wrote a file', 'Writing a file'],
  bash: ['Ran a command', 'Running a command'],
  todo_update: ['Updated the to-do list', 'Updating the to-do list'],
  plan_create: ['Made a plan', 'Making a plan'],
  contacts_send: [
    'Sent a message to a contact',
    'Sending a message to a contact',
  ],
  telegram_send_file: ['Sent a file on Telegram', 'Sending a file on Telegram'],
  telegram_send_voice: [
    'Sent a voice message on Telegram',
    'Sending a voice message on Telegram',
  ],
  telegram_react: ['Reacted on Telegram', 'Reacting on Telegram'],
  set_mode: ['Switched mode', 'Switching mode'],
  select_account: ['Chose an account', 'Choosing an account'],
};

/** A tool as the Tools page names it: what it does, in a few words (its id shows beside, smaller). */
const TOOL_TITLES: Record<string, string> = {
  web_search: 'Search the web',
  url_fetch: 'Read a web page',
  db_query: 'Look up and change your data',
  update_db_schema: 'Keep notes on your data',
  save_memory: 'Save to memory',
  generate_image: 'Create an image',
  edit_image: 'Edit an image',
  whatsapp_read_messages: 'Read WhatsApp messages',
  whatsapp_send_message: 'Send a WhatsApp message',
  whatsapp_manage_permission: 'Change who may write on WhatsApp',
  whatsapp_list_permissions: 'List WhatsApp contacts',
  manage_cronjob: 'Manage scheduled jobs',
  manage_pulse: 'Change the Pulse settings',
  read_file: 'Read a file',
  write_file: 'Write a file',
  bash: 'Run a command (sandbox)',
  todo_update: 'Keep a to-do list',
  plan_create: 'Make a plan',
  contacts_send: 'Message a contact',
  telegram_send_file: 'Send a file on Telegram',
  telegram_send_voice: 'Send a voice message on Telegram',
  telegram_react: 'React on Telegram',
  telegram_send_message: 'Send a Telegram message',
  email_actions: 'Read and send email',
  calendar_actions: 'Read and change calendars',
  set_mode: 'Switch mode',
  select_account: 'Choose an account',
};

/** "save_memory" → "Save to memory"; an unknown tool: its id in words, capitalised. */
export function toolTitle(name: string): string {
  const known = TOOL_TITLES[name];
  if (known) return known;
  const spaced = words(name);
  return `${spaced.charAt(0).toUpperCase()}${spaced.slice(1)}`;
}

/** db_query operations that only read. */
const READ_OPERATIONS = new Set([
  'find',
  'findOne',
  'aggregate',
  'countDocuments',
  'listCollections',
]);

/** "some_tool" / "someTool" → "some tool". */
export function words(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
}

/** A tool call's name in words ("Searched the web"); unknown tools: "Used some tool". */
export function toolLabel(
  name: string,
  args: Record<string, unknown>,
  running: boolean,
): string {
  if (name === 'db_query') {
    const operation = args['operation'];
    if (typeof operation === 'string' && !READ_OPERATIONS.has(operation))
      return running ? 'Changing the database' : 'Changed the database';
  }
  const labels = TOOL_LABELS[name];
  if (labels) return labels[running ? 1 : 0];
  return `${running ? 'Using' : 'Used'} ${words(name)}`;
}

/** One argument as the owner reads it. */
export interface ToolArgument {
  key: string;
  value: string;
}

const SUMMARY_LENGTH = 60;

/** A value in words: text as is, numbers and yes/no, lists joined, objects as compact JSON. */
export function argumentValue(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number') return String(value);
  if (
    Array.isArray(value) &&
    value.every((item) => item === null || typeof item !== 'object')
  )
    return value.length ? value.map(argumentValue).join(', ') : 'none';
  return JSON.stringify(value) ?? String(value);
}

/** The arguments as `key: value` rows, in the order the model sent them. */
export function toolArguments(args: Record<string, unknown>): ToolArgument[] {
  return Object.entries(args ?? {}).map(([key, value]) => ({
    key: words(key),
    value: argumentValue(value),
  }));
}

/** The argument that says what the call was about (a query, a URL, a path…), shortened, or null. */
export function toolSummary(
  name: string,
  args: Record<string, unknown>,
): string | null {
  const preferred =
    name === 'db_query'
      ? [args['collection']]
      : [
          args['query'],
          args['url'],
          args['command'],
          args['path'],
          args['name'],
          args['shortDescription'],
        ];
  const text =
    preferred.find((value) => typeof value === 'string' && value.trim()) ??
    Object.values(args ?? {}).find(
      (value) => typeof value === 'string' && value.trim(),
    );
  if (typeof text !== 'string') return null;
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > SUMMARY_LENGTH
    ? `${line.slice(0, SUMMARY_LENGTH - 1)}…`
    : line;
}

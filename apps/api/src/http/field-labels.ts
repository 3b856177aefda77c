/**
 * Request fields as people read them in an error: "telegramBotToken must be a string" becomes
 * "Telegram bot token must be a string". Names that camelCase cannot spell (brands, acronyms) are
 * listed; any other camelCase field is split into words. A plain one-word field ("title") already
 * reads as a word and is kept.
 */
const FIELD_LABELS: Record<string, string> = {
  openaiApiKey: 'OpenAI API key',
  geminiApiKey: 'Gemini API key',
  braveApiKey: 'Brave Search API key',
  openaiCompatible: 'OpenAI-compatible endpoint',
  telegramBotToken: 'Telegram bot token',
  telegramApiRoot: 'Telegram Bot API server',
  telegramOwnerChatId: 'Your Telegram chat id',
  realtimeModel: 'Voice model',
  realtimeVoice: 'Voice',
  dbSchema: 'database notes',
  canRead: 'Read permission',
  canReply: 'Reply permission',
};

/** Words camelCase loses the spelling of. */
const WORD_SPELLINGS: Record<string, string> = {
  api: 'API',
  url: 'URL',
  urls: 'URLs',
  imap: 'IMAP',
  smtp: 'SMTP',
  caldav: 'CalDAV',
  openai: 'OpenAI',
  tls: 'TLS',
  ai: 'AI',
  mcp: 'MCP',
  usd: 'USD',
  whatsapp: 'WhatsApp',
  telegram: 'Telegram',
  gemini: 'Gemini',
  brave: 'Brave',
  pulse: 'Pulse',
};

function segmentLabel(segment: string): string {
  if (/^\d+$/.test(segment)) return `#${Number(segment) + 1}`;
  const known = FIELD_LABELS[segment];
  if (known) return known;
  return segment
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(' ')
    .map((word) => {
      const lower = word.toLowerCase();
      return WORD_SPELLINGS[lower] ?? lower;
    })
    .join(' ');
}

/** "openaiCompatible.0.baseUrl" → "OpenAI-compatible endpoint #1 base URL"; "title" stays "title". */
export function fieldLabel(path: string): string {
  const label = path.split('.').map(segmentLabel).join(' ');
  if (label === path) return path;
  return label.charAt(0).toUpperCase() + label.slice(1);
}

const LEADING_PATH = /^([A-Za-z_$][\w$]*(?:\.(?:\d+|[A-Za-z_$][\w$]*))*)(?= )/;

/**
 * A validation message with its leading field path in words. Only a message that starts with the
 * field it is about (`path`) is changed: "property x should not exist" and custom sentences stay.
 */
export function inPlainWords(message: string, path: string): string {
  const match = LEADING_PATH.exec(message);
  if (!match || match[1] !== path) return message;
  return fieldLabel(path) + message.slice(path.length);
}

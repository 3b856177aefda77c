/** The Telegram bot's long polling: `disconnected` while no token is set. */
export const TELEGRAM_STATUSES = [
  'disconnected',
  'connecting',
  'connected',
  'error',
] as const;
export type TelegramStatus = (typeof TELEGRAM_STATUSES)[number];

/** `GET /api/telegram/status`. `reason` says in plain words why it is not connected. */
export interface TelegramStatusView {
  status: TelegramStatus;
  /** The bot's @username once connected. */
  username: string | null;
  reason: string | null;
}

/** Who may use the bot: one Telegram chat (a person, or a group) and what the assistant may do there. */
export interface TelegramPermission {
  id: string;
  /** Telegram's chat id (negative for groups), as a string. Unique. */
  chatId: string;
  displayName: string;
  canRead: boolean;
  canReply: boolean;
  /** Auto-replies in this chat may see the owner's memory (off by default). */
  trusted: boolean;
  /** The console chat holding this Telegram chat's auto-replies. */
  consoleChatId: string | null;
  /** Paused by the bot-loop guard until then; null when not paused. */
  autoReplyPausedUntil: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CreateTelegramPermissionRequest {
  chatId: string;
  displayName: string;
  canRead?: boolean;
  canReply?: boolean;
  trusted?: boolean;
}

export type UpdateTelegramPermissionRequest = Partial<
  Omit<CreateTelegramPermissionRequest, 'chatId'>
>;

/** A message the bot received, as the console lists it (`GET /api/telegram/messages`). */
export interface TelegramInboundMessage {
  id: string;
  chatId: string;
  chatType: 'private' | 'group' | 'supergroup' | 'channel';
  chatTitle: string | null;
  fromName: string;
  fromUsername: string | null;
  text: string;
  at: string;
  /** `pending`, `working`, `done`, `skipped`, `stale` or `failed` (the auto-reply's progress). */
  processing: string;
  /** Why it got no reply (no permission, a group message not addressed to the bot…). */
  reason: string | null;
  /** The chat has a permission with canRead. */
  permitted: boolean;
  /** The auto-reply's answer (sent, or kept in the chat when replies are off); null until there is one. */
  reply: string | null;
}

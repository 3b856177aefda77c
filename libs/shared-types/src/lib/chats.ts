import type { MessageAttachment } from './attachments';

/** What a chat is for: the owner's own conversation, a scheduled job's runs, the Pulse heartbeat, or a WhatsApp contact's auto-replies. */
export const CHAT_KINDS = ['chat', 'cron', 'pulse', 'whatsapp'] as const;
export type ChatKind = (typeof CHAT_KINDS)[number];

/** `GET /api/chats` items (newest first) and the answer to create/rename. */
export interface ChatSummary {
  id: string;
  title: string;
  /** Shown above the others in its group. */
  pinned: boolean;
  /** Left out of the list unless it is asked for with `?archived=true`. */
  archived: boolean;
  /** The model this chat's replies use; `null`: the primary model from the settings. */
  model: string | null;
  kind: ChatKind;
  createdAt: string;
  updatedAt: string;
  /** True while a reply is being generated in this chat. */
  running: boolean;
}

export interface CreateChatRequest {
  title?: string;
}

export interface RenameChatRequest {
  title: string;
}

/** `PATCH /api/chats/:id`: at least one field; the others stay as they are. */
export interface UpdateChatRequest {
  title?: string;
  pinned?: boolean;
  archived?: boolean;
  /** A model id as in the settings (`gemini-…`, `gpt-…`, `<endpoint>/<model>`); `null` or `''`: the primary model. */
  model?: string | null;
}

/** `GET /api/chats` query. */
export interface ChatListQuery {
  /** Words to find in titles and message text (case-insensitive), at most CHAT_SEARCH_MAX_LENGTH characters. */
  q?: string;
  /** `true`: the archived chats instead of the others. */
  archived?: boolean;
}

/** Longest search text accepted by `GET /api/chats?q=`. */
export const CHAT_SEARCH_MAX_LENGTH = 100;
/** At most this many chats answer a search. */
export const CHAT_SEARCH_MAX_RESULTS = 50;

/** Longest chat title accepted. */
export const CHAT_TITLE_MAX_LENGTH = 200;
/** Longest user message accepted (characters). */
export const MESSAGE_MAX_LENGTH = 100_000;

export interface ToolCallRecord {
  /** The provider's call id (or one we made up when the provider gives none). */
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** The JSON string the model received; null while the call runs. */
  result: string | null;
  /** Set when the tool failed, timed out or was refused. */
  error: string | null;
  durationMs: number | null;
}

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ToolCallPart extends ToolCallRecord {
  type: 'tool_call';
}

/** An assistant reply in order: text and tool calls as they happened. */
export type AssistantPart = TextPart | ToolCallPart;

export const MESSAGE_ROLES = ['user', 'assistant'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

export const MESSAGE_STATUSES = [
  'streaming',
  'complete',
  'stopped',
  'error',
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export interface TokenUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
}

/**
 * The writer of a user message that is not the owner: a WhatsApp contact whose
 * message the auto-reply answered. Their text is untrusted content.
 */
export interface MessageAuthor {
  kind: 'contact';
  channel: 'whatsapp';
  name: string;
  /** Digits only, country code first. */
  phone: string;
}

/** `GET /api/chats/:id/messages` items (oldest first). */
export interface ChatMessage {
  id: string;
  chatId: string;
  role: MessageRole;
  /** All text of the message (for an assistant reply: its text parts joined). */
  content: string;
  /** Assistant replies only. */
  parts?: AssistantPart[];
  status: MessageStatus;
  /** Why the reply ended early (error or cap), readable by the owner. */
  error?: string | null;
  model?: string | null;
  usage?: TokenUsage | null;
  /** User messages sent with files: what was attached (the files are at `/api/attachments/<id>`). */
  attachments?: MessageAttachment[];
  /** User messages a contact wrote (absent: the owner wrote it). */
  author?: MessageAuthor | null;
  /** An auto-reply: whether it went out on WhatsApp. Absent for replies that go nowhere else. */
  delivery?: MessageDelivery | null;
  createdAt: string;
  updatedAt: string;
}

/** Channels an assistant reply can be delivered on besides the chat. */
export const DELIVERY_CHANNELS = ['whatsapp'] as const;
export type DeliveryChannel = (typeof DELIVERY_CHANNELS)[number];

/** `not-sent`: on purpose (replies to the contact are off, empty answer); `failed`: the channel refused or the server stopped. */
export const DELIVERY_STATUSES = ['sent', 'not-sent', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Where an assistant reply was sent besides the chat (WhatsApp auto-replies). */
export interface MessageDelivery {
  channel: DeliveryChannel;
  status: DeliveryStatus;
  /** Why it was not sent, for the owner. */
  detail: string | null;
  at: string;
}

/** `GET /api/chats/:id/messages` query. */
export interface MessagesQuery {
  /** 1 to 200, default 50. */
  limit?: number;
  /** A message id: the page just before it (older). */
  before?: string;
}

/** `POST /api/chats/:id/stop` */
export interface StopReplyResponse {
  /** False when no reply was running. */
  stopped: boolean;
}

/** `POST /api/chats/:id/messages` */
export interface SendMessageRequest {
  content: string;
  /** Ids from `POST /api/attachments`, each unsent so far (at most MAX_ATTACHMENTS_PER_MESSAGE). */
  attachmentIds?: string[];
  /**
   * In a contact's chat (kind `whatsapp`) a turn gets the contact's restricted
   * tool set, since the history holds the contact's untrusted messages; true
   * offers the owner's full tool set for this message. Ignored in other chats.
   */
  fullTools?: boolean;
}

/** The SSE events of `POST /api/chats/:id/messages`: the `event:` name → the JSON `data:`. */
export interface ChatStreamEventMap {
  /** The stored user message. */
  message: ChatMessage;
  delta: { text: string };
  tool_call: { id: string; name: string; arguments: Record<string, unknown> };
  tool_result: {
    id: string;
    name: string;
    result: string;
    durationMs: number;
    error?: string | null;
  };
  /** The reply ended; `stopped` when the owner pressed Stop. */
  done: { messageId: string; usage?: TokenUsage; stopped?: boolean };
  /**
   * The reply failed; `messageId` is set when partial text was kept. `unsaved`: the user's
   * message itself could not be stored, so nothing of the turn was kept (send it again).
   */
  error: { message: string; messageId?: string | null; unsaved?: boolean };
}

export type ChatStreamEventName = keyof ChatStreamEventMap;

export const CHAT_STREAM_EVENT_NAMES: readonly ChatStreamEventName[] = [
  'message',
  'delta',
  'tool_call',
  'tool_result',
  'done',
  'error',
];

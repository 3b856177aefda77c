import type { TaintMark } from './actions';
import type { MessageAttachment } from './attachments';

/** What a chat is for: the owner's own conversation, a scheduled job's runs, the Pulse heartbeat, or a WhatsApp contact's auto-replies. */
export const CHAT_KINDS = [
  'chat',
  'cron',
  'pulse',
  'whatsapp',
  'telegram',
] as const;
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
  /** The conversation's mode: which tools its turns are offered (`default` for a new chat). */
  mode: string;
  /** The account selected for the mode's tools (email, calendar), or null. */
  accountId: string | null;
  /**
   * Search answers only (`?q=`): the words around the first message text that holds the search, in its own
   * letter case, whitespace folded, "…" where it was cut. Absent when only the title matched.
   */
  snippet?: string;
}

export interface CreateChatRequest {
  title?: string;
}

/** `PATCH /api/chats/:id`: rename and/or switch the mode (one of `GET /api/tools` modes). */

/** @deprecated the old name of `UpdateChatRequest` with a title. */
export interface RenameChatRequest {
  title: string;
}

/** Who switched a conversation's mode: the model (set_mode, or a call to another mode's tool) or the owner. */
export type ModeSwitchBy = 'model' | 'owner';
/** `PATCH /api/chats/:id`: at least one field; the others stay as they are. */
export interface UpdateChatRequest {
  title?: string;
  /** One of the registered modes (`GET /api/tools`). */
  mode?: string;
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
  /** Set when this call's result brought third-party content into the turn (a web page, an email…). */
  taint?: TaintMark | null;
  /** Set when the call did not run but waits for the owner (`GET /api/actions`). */
  pendingActionId?: string | null;
}

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ToolCallPart extends ToolCallRecord {
  type: 'tool_call';
}

/** A mode switch, shown in the chat as a small event line ("Switched to Data mode"). */
export interface ModePart {
  type: 'mode';
  mode: string;
  by: ModeSwitchBy;
}

/** An assistant reply in order: text, tool calls and mode switches as they happened. */
export type AssistantPart = TextPart | ToolCallPart | ModePart;

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
  /** Of `inputTokens`, those the provider served from its prompt cache (where it reports them). */
  cachedInputTokens?: number;
  /** Of `inputTokens`, audio (a voice call); priced at the model's audio input price. */
  audioInputTokens?: number;
  /** Of `cachedInputTokens`, audio (where reported). */
  cachedAudioInputTokens?: number;
  /** Of `outputTokens`, audio (a voice call); priced at the model's audio output price. */
  audioOutputTokens?: number;
}

/** The messaging channels contacts write on (each has its auto-reply and its contact chats). */
export const CONTACT_CHANNELS = ['whatsapp', 'telegram'] as const;
export type ContactChannel = (typeof CONTACT_CHANNELS)[number];

/** The chat kinds that hold one contact's conversation (the contact tool profile applies). */
export const CONTACT_CHAT_KINDS: readonly ChatKind[] = CONTACT_CHANNELS;

/**
 * The writer of a user message that is not the owner: a contact whose message
 * the auto-reply answered. Their text is untrusted content.
 */
export interface MessageAuthor {
  kind: 'contact';
  channel: ContactChannel;
  name: string;
  /** WhatsApp: digits only, country code first. */
  phone?: string;
  /** Telegram: the chat id. */
  telegramChatId?: string;
}

/** Who sent a user message that no person wrote: a scheduled job or the Pulse heartbeat. */
export const MESSAGE_TRIGGERS = ['cron', 'pulse'] as const;
export type MessageTrigger = (typeof MESSAGE_TRIGGERS)[number];

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
  /** User messages the scheduler wrote: a job's instruction (`cron`) or a Pulse prompt (`pulse`). Absent: a person wrote it. */
  trigger?: MessageTrigger;
  /** An auto-reply: whether it went out on WhatsApp. Absent for replies that go nowhere else. */
  delivery?: MessageDelivery | null;
  /** Assistant replies: what brought third-party content into the turn (empty or absent: nothing did). */
  taint?: TaintMark[];
  /** The message has other versions (an edit, a regenerate): which one this is (1-based) of how many. Absent: only one. */
  versions?: MessageVersions;
  createdAt: string;
  updatedAt: string;
}

/** Where a message stands among its versions: `index` (1 = the first written) of `count`. */
export interface MessageVersions {
  index: number;
  count: number;
}

/** Channels an assistant reply can be delivered on besides the chat. */
export const DELIVERY_CHANNELS = CONTACT_CHANNELS;
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
  /** Allow this one reply over the daily and monthly spend caps. */
  allowOverBudget?: boolean;
}

/**
 * `POST /api/chats/:id/messages/:messageId/regenerate`: a new version of a shown reply (`messageId` an assistant
 * reply), or, with `content`, a new version of the owner's message (`messageId` that message, or the reply that
 * answers it) and a reply to it. The old version stays, with everything after it, reachable by switching versions.
 */
export interface RegenerateReplyRequest {
  /** Edit and resend: the owner's message's new text (required when `messageId` is the owner's message). */
  content?: string;
  /** As in SendMessageRequest (a contact's chat only). */
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
    /** The result marked the turn as having read third-party content. */
    taint?: TaintMark | null;
    /** The call waits for the owner's approval instead of having run. */
    pendingActionId?: string | null;
  };
  /** The conversation switched mode during the reply: its next model request carries that mode's tools. */
  mode: { mode: string; by: ModeSwitchBy };
  /** The reply ended; `stopped` when the owner pressed Stop. */
  done: { messageId: string; usage?: TokenUsage; stopped?: boolean };
  /**
   * The reply failed; `messageId`: the failed reply as kept (`status: "error"`, with whatever text arrived). `unsaved`: the user's
   * message itself could not be stored, so nothing of the turn was kept (send it again).
   */
  error: {
    message: string;
    messageId?: string | null;
    unsaved?: boolean;
    /** A spend cap stopped the reply: sending again with `allowOverBudget: true` allows this one reply over it. */
    overBudget?: boolean;
  };
}

export type ChatStreamEventName = keyof ChatStreamEventMap;

export const CHAT_STREAM_EVENT_NAMES: readonly ChatStreamEventName[] = [
  'message',
  'delta',
  'tool_call',
  'tool_result',
  'mode',
  'done',
  'error',
];

/** WhatsApp (the seed's routes under `/api/whatsapp`). */

export const WHATSAPP_STATUSES = [
  'disconnected',
  'connecting',
  'qr_ready',
  'connected',
] as const;
export type WhatsAppStatus = (typeof WHATSAPP_STATUSES)[number];

/** `POST /api/whatsapp/connect`: already linked (with its number), or the link is starting. */
export const WHATSAPP_CONNECT_RESULTS = [
  'already_connected',
  'connecting',
] as const;
export type WhatsAppConnectResult = (typeof WHATSAPP_CONNECT_RESULTS)[number];
export interface WhatsAppConnectResponse {
  status: WhatsAppConnectResult;
  /** Only with `already_connected`. */
  phoneNumber?: string | null;
}

/** `GET /api/whatsapp/qr` */
export interface WhatsAppQrResponse {
  /** PNG data URL, 256×256. */
  qr: string;
}

/** `POST /api/whatsapp/disconnect` */
export interface WhatsAppDisconnectRequest {
  /** Also log the device out and delete the saved session. */
  clearSession?: boolean;
}
export interface WhatsAppDisconnectResponse {
  status: 'disconnected';
}

/**
 * Why the link is down or retrying, as a code the console puts in plain words. `logged_out` and `forbidden`
 * stop the link; the others come with a reconnect. From Baileys' disconnect codes: 408 `connection_lost`,
 * 428 `connection_closed`, 440 `connection_replaced`, 500 `bad_session`, 411 `multidevice_mismatch`,
 * 503 `service_unavailable`, any other `closed`; `unreachable` when no connection could be opened at all.
 */
export const WHATSAPP_LINK_PROBLEMS = [
  'logged_out',
  'forbidden',
  'connection_lost',
  'connection_closed',
  'connection_replaced',
  'bad_session',
  'multidevice_mismatch',
  'service_unavailable',
  'unreachable',
  'closed',
] as const;
export type WhatsAppLinkProblem = (typeof WHATSAPP_LINK_PROBLEMS)[number];

/** `GET /api/whatsapp/status`. `reason` says why the link stopped (logged out, forbidden…), null otherwise. */
export interface WhatsAppStatusView {
  status: WhatsAppStatus;
  phoneNumber: string | null;
  reason?: string | null;
  /** `reason` as a code (null when the link is fine or was closed by the owner). */
  problem?: WhatsAppLinkProblem | null;
  /** When the next reconnect attempt is due (ISO), while backing off. */
  reconnectAt?: string | null;
}

/** The seed's BufferedMessage: one WhatsApp message, text-normalised. */
export interface BufferedMessage {
  id: string;
  from: string;
  fromName: string | null;
  to: string;
  body: string;
  /** Milliseconds since epoch. */
  timestamp: number;
  fromMe: boolean;
  isGroup: boolean;
}

/** `GET /api/whatsapp/messages` query. */
export interface WhatsAppMessagesQuery {
  /** Phone digits; messages whose sender or recipient contains them. */
  contact?: string;
  limit?: number;
}

/** `GET /api/whatsapp/messages` */
export interface WhatsAppMessagesResponse {
  messages: BufferedMessage[];
}

/**
 * A message someone sent to the linked number, as the console lists it (`GET /api/whatsapp/inbound`), strangers
 * included: the same view as Telegram's latest messages.
 */
export interface WhatsAppInboundMessage {
  id: string;
  /** The sender's digits (what a permission is keyed by). */
  phone: string;
  fromName: string | null;
  text: string;
  at: string;
  /** `pending`, `working`, `done`, `skipped`, `stale` or `failed` (the auto-reply's progress). */
  processing: string;
  /** Why it got no reply (no permission, too old…). */
  reason: string | null;
  /** The sender has a permission with canRead. */
  permitted: boolean;
  /** The auto-reply's answer; null until there is one. */
  reply: string | null;
}

/** The seed's WhatsAppPermission (`id` instead of `_id`), plus `trusted`. */
export interface WhatsAppPermission {
  id: string;
  /** Digits only, unique. */
  phoneNumber: string;
  displayName: string;
  contactId: string | null;
  canRead: boolean;
  canReply: boolean;
  /** Auto-replies to this contact may see the owner's memory (off by default: the sender is untrusted). */
  trusted: boolean;
  chatId: string | null;
  /**
   * Auto-replies to this contact are paused until this time: the bot-loop
   * guard stopped them (the owner can lift it). Null when never paused.
   */
  autoReplyPausedUntil: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CreateWhatsAppPermissionRequest {
  phoneNumber: string;
  displayName: string;
  canRead?: boolean;
  canReply?: boolean;
  trusted?: boolean;
}

export type UpdateWhatsAppPermissionRequest = Partial<
  Pick<WhatsAppPermission, 'displayName' | 'canRead' | 'canReply' | 'trusted'>
>;

/** Limits of `/messages` and `whatsapp_read_messages` (the seed's). */
export const WHATSAPP_MESSAGES_DEFAULT_LIMIT = 50;
export const WHATSAPP_TOOL_MESSAGES_DEFAULT_LIMIT = 20;
export const WHATSAPP_MESSAGES_MAX_LIMIT = 100;

/**
 * The part of a Baileys socket the WhatsApp service uses. The production
 * factory hands in a real `makeWASocket` socket; tests hand in a fake that
 * emits the same events with the same shapes.
 */

/** A message key as Baileys v7 delivers it (`*Alt` carry the other addressing: LID ↔ phone number). */
export interface WhatsAppMessageKey {
  remoteJid?: string | null;
  remoteJidAlt?: string | null;
  participant?: string | null;
  participantAlt?: string | null;
  fromMe?: boolean | null;
  id?: string | null;
}

/** A `proto.IWebMessageInfo`, reduced to what the service reads. */
export interface WhatsAppWebMessage {
  key: WhatsAppMessageKey;
  /** Seconds since epoch (a number, a numeric string or a protobuf Long). */
  messageTimestamp?: number | string | { toNumber(): number } | null;
  pushName?: string | null;
  message?: Record<string, unknown> | null;
}

export interface WhatsAppMessagesUpsert {
  messages: WhatsAppWebMessage[];
  type: 'notify' | 'append' | string;
}

export interface WhatsAppConnectionUpdate {
  connection?: 'connecting' | 'open' | 'close';
  qr?: string;
  /** A Boom error: `output.statusCode` is the `DisconnectReason`. */
  lastDisconnect?: {
    error?: (Error & { output?: { statusCode?: number } }) | undefined;
    date?: Date;
  };
}

export interface WhatsAppSocketEvents {
  'connection.update': WhatsAppConnectionUpdate;
  'messages.upsert': WhatsAppMessagesUpsert;
}

export interface WhatsAppSocketEventSource {
  on<K extends keyof WhatsAppSocketEvents>(
    event: K,
    listener: (payload: WhatsAppSocketEvents[K]) => void,
  ): unknown;
  off<K extends keyof WhatsAppSocketEvents>(
    event: K,
    listener: (payload: WhatsAppSocketEvents[K]) => void,
  ): unknown;
}

export interface WhatsAppSocket {
  readonly ev: WhatsAppSocketEventSource;
  /** The linked account once open (`id` like `14155551234:12@s.whatsapp.net`). */
  readonly user?: { id: string; lid?: string | null } | null;
  sendMessage(
    jid: string,
    content: { text: string },
  ): Promise<{ key?: { id?: string | null } } | undefined>;
  logout(msg?: string): Promise<void>;
  end(error: Error | undefined): void;
}

export interface WhatsAppSocketOptions {
  /** Where the multi-file auth state lives (`<DATA_DIR>/whatsapp-auth`). */
  authDir: string;
}

/** Creates the socket; replaced in tests. */
export abstract class WhatsAppSocketFactory {
  abstract create(options: WhatsAppSocketOptions): Promise<WhatsAppSocket>;
}

/** Baileys' `DisconnectReason` codes the service acts on (the enum lives in the ESM-only package). */
export const WhatsAppDisconnectCode = {
  connectionClosed: 428,
  connectionLost: 408,
  connectionReplaced: 440,
  timedOut: 408,
  loggedOut: 401,
  badSession: 500,
  restartRequired: 515,
  multideviceMismatch: 411,
  forbidden: 403,
  unavailableService: 503,
} as const;

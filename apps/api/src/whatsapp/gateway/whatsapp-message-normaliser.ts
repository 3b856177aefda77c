import type { BufferedMessage } from '@metatronos/shared-types';
import { phoneDigits } from './whatsapp-gateway';
import type { WhatsAppWebMessage } from './whatsapp-socket';

const PHONE_SUFFIX = '@s.whatsapp.net';
const LID_SUFFIX = '@lid';
const GROUP_SUFFIX = '@g.us';

/** Wrappers whose inner `message` holds the real content. */
const WRAPPERS = [
  'ephemeralMessage',
  'viewOnceMessage',
  'viewOnceMessageV2',
  'viewOnceMessageV2Extension',
  'documentWithCaptionMessage',
  'editedMessage',
] as const;

/** Keys that ride along with the content and are not its type (Baileys' getContentType skips them too). */
const NOT_CONTENT = new Set([
  'senderKeyDistributionMessage',
  'messageContextInfo',
]);

export function isPhoneJid(jid: string | null | undefined): jid is string {
  return !!jid && jid.endsWith(PHONE_SUFFIX);
}

export function isGroupJid(jid: string | null | undefined): boolean {
  return !!jid && jid.endsWith(GROUP_SUFFIX);
}

/** `14155551234` or `+1 415…` → `14155551234@s.whatsapp.net`; a JID stays as it is. */
export function toJid(phoneOrJid: string): string {
  if (phoneOrJid.includes('@')) return phoneOrJid;
  return `${phoneDigits(phoneOrJid)}${PHONE_SUFFIX}`;
}

/** A linked-device JID (`14155551234:12@s.whatsapp.net`) without its device part. */
export function withoutDevice(jid: string): string {
  const [user, server] = jid.split('@');
  return `${user.split(':')[0]}@${server}`;
}

/**
 * v7 addresses a person by phone-number JID or by LID (`…@lid`), and puts the
 * other one in `*Alt`. Prefer the phone-number JID, so digits are the phone
 * number the owner knows; fall back to whatever there is.
 */
export function preferPhoneJid(
  jid: string | null | undefined,
  alt: string | null | undefined,
): string | null {
  if (isPhoneJid(jid)) return withoutDevice(jid);
  if (isPhoneJid(alt)) return withoutDevice(alt);
  const any = jid ?? alt;
  return any ? withoutDevice(any) : null;
}

function unwrap(message: Record<string, unknown>): Record<string, unknown> {
  let current = message;
  for (let depth = 0; depth < 4; depth++) {
    const wrapper = WRAPPERS.find(
      (key) =>
        isRecord(current[key]) &&
        isRecord((current[key] as Record<string, unknown>)['message']),
    );
    if (!wrapper) return current;
    current = (current[wrapper] as Record<string, unknown>)[
      'message'
    ] as Record<string, unknown>;
  }
  return current;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The seed's content normalisation: text as is, media and everything else as a `[…]` placeholder. */
export function normaliseBody(
  raw: Record<string, unknown> | null | undefined,
): string | null {
  if (!raw) return null;
  const message = unwrap(raw);
  const type = Object.keys(message).find(
    (key) =>
      !NOT_CONTENT.has(key) &&
      message[key] !== null &&
      message[key] !== undefined,
  );
  if (!type) return null;
  const content = isRecord(message[type])
    ? (message[type] as Record<string, unknown>)
    : {};
  const withText = (label: string, value: unknown) =>
    text(value) ? `[${label}] ${text(value)}` : `[${label}]`;
  switch (type) {
    case 'conversation':
      return text(message[type]);
    case 'extendedTextMessage':
      return text(content['text']);
    case 'imageMessage':
      return withText('Image', content['caption']);
    case 'videoMessage':
      return withText('Video', content['caption']);
    case 'documentMessage':
      return withText('Document', content['fileName']);
    case 'audioMessage':
      return '[Audio message]';
    case 'stickerMessage':
      return '[Sticker]';
    default:
      return `[${type}]`;
  }
}

/** Seconds (number, numeric string or Long) → milliseconds; null when absent. */
export function timestampMs(
  value: WhatsAppWebMessage['messageTimestamp'],
): number | null {
  if (value === null || value === undefined) return null;
  const seconds = typeof value === 'object' ? value.toNumber() : Number(value);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : null;
}

export interface NormalisedMessage {
  message: BufferedMessage;
  /** Digits of the other party (sender of a received message, recipient of an own one; the sender in a group). */
  phone: string;
}

/**
 * A `messages.upsert` entry as the seed's BufferedMessage, or null when it has
 * no id, no chat or no content (protocol messages, reactions to nothing…).
 * `ownJid` is the linked account's phone-number JID.
 */
export function normaliseMessage(
  raw: WhatsAppWebMessage,
  ownJid: string,
  now: number,
): NormalisedMessage | null {
  const { key } = raw;
  const id = key.id;
  const chat = preferPhoneJid(key.remoteJid, key.remoteJidAlt);
  if (!id || !chat) return null;
  if (chat === 'status@broadcast') return null;
  const body = normaliseBody(raw.message ?? null);
  if (body === null) return null;
  const isGroup = isGroupJid(chat);
  const fromMe = key.fromMe === true;
  const sender = isGroup
    ? (preferPhoneJid(key.participant, key.participantAlt) ?? chat)
    : chat;
  const from = fromMe ? ownJid : sender;
  const to = fromMe ? chat : isGroup ? chat : ownJid;
  const phone = phoneDigits(fromMe ? chat : sender);
  return {
    message: {
      id,
      from,
      fromName: raw.pushName ?? null,
      to,
      body,
      timestamp: timestampMs(raw.messageTimestamp) ?? now,
      fromMe,
      isGroup,
    },
    phone,
  };
}

export { LID_SUFFIX, PHONE_SUFFIX };

import type { BufferedMessage, WhatsAppStatus } from '@metatronos/shared-types';

/**
 * What the rest of the app may ask of the WhatsApp link (tools, prompt
 * sections, permissions, auto-reply). `WhatsAppService` implements it and is
 * provided under this token, so its users never touch the socket.
 */
export abstract class WhatsAppGateway {
  abstract get status(): WhatsAppStatus;
  abstract get phoneNumber(): string | null;
  /**
   * Sends a text to a phone number (digits only) or a JID. Throws an Error with
   * an owner-readable message when not connected or when WhatsApp refuses it.
   * The sent message is stored beside the received ones before it resolves; with
   * `storeInBackground` it resolves once sent, and `stored` settles once stored
   * (never rejects: a failed store is logged, the send is not undone).
   */
  abstract sendText(
    phoneOrJid: string,
    text: string,
    options?: { storeInBackground?: boolean },
  ): Promise<{ success: true; jid: string; stored?: Promise<void> }>;
  /**
   * Stored messages, oldest first, the last `limit`: only those whose sender or
   * recipient digits contain `contact` when given, and only from/to the phones
   * in `onlyPhones` when given (permission filtering).
   */
  abstract getMessages(query: {
    contact?: string;
    limit: number;
    onlyPhones?: readonly string[];
  }): Promise<BufferedMessage[]>;
}

/** The digits of a phone number or JID (`+1 415-555 1234`, `14155551234@s.whatsapp.net` → `14155551234`). */
export function phoneDigits(value: string): string {
  return value.split('@')[0].split(':')[0].replace(/\D/g, '');
}

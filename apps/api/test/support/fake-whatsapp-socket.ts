import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type {
  WhatsAppSocket,
  WhatsAppSocketFactory,
  WhatsAppSocketOptions,
  WhatsAppWebMessage,
} from '../../src/whatsapp/gateway/whatsapp-socket';

/** A Baileys socket stand-in: tests emit `connection.update` / `messages.upsert` on it as WhatsApp would. */
export class FakeWhatsAppSocket extends EventEmitter implements WhatsAppSocket {
  readonly ev = this;
  user: { id: string; lid?: string | null } | null = null;
  readonly sent: Array<{ jid: string; content: { text: string } }> = [];
  loggedOut = false;
  ended = false;
  failSend: Error | null = null;

  constructor(readonly options: WhatsAppSocketOptions) {
    super();
  }

  async sendMessage(jid: string, content: { text: string }) {
    if (this.failSend) throw this.failSend;
    this.sent.push({ jid, content });
    // Unique like WhatsApp's own ids: sent messages are stored under them.
    return {
      key: { id: `3EB0${randomBytes(8).toString('hex').toUpperCase()}` },
    };
  }

  async logout(): Promise<void> {
    this.loggedOut = true;
    this.ended = true;
    // Baileys ends the socket with loggedOut after a logout; the service must ignore it by then.
    this.emit('connection.update', {
      connection: 'close',
      lastDisconnect: { error: boom(401), date: new Date() },
    });
  }

  end(): void {
    this.ended = true;
  }

  /** WhatsApp shows a QR code to scan. */
  qr(code = `2@${Math.random().toString(36).slice(2)},key,secret`): void {
    this.emit('connection.update', { qr: code });
  }

  /** The link opens for `phone` (device 12). */
  open(phone = '19876543210'): void {
    this.user = {
      id: `${phone}:12@s.whatsapp.net`,
      lid: '987654321098765:12@lid',
    };
    this.emit('connection.update', { connection: 'open' });
  }

  /** The link closes with a Baileys DisconnectReason code. */
  close(statusCode: number): void {
    this.emit('connection.update', {
      connection: 'close',
      lastDisconnect: { error: boom(statusCode), date: new Date() },
    });
  }

  upsert(
    messages: WhatsAppWebMessage[],
    type: 'notify' | 'append' = 'notify',
  ): void {
    this.emit('messages.upsert', { messages, type });
  }
}

/** A Boom-shaped error as Baileys puts in `lastDisconnect.error`. */
function boom(statusCode: number): Error & { output: { statusCode: number } } {
  return Object.assign(new Error(`Connection Failure (${statusCode})`), {
    isBoom: true,
    output: { statusCode },
  });
}

export class FakeWhatsAppSocketFactory implements WhatsAppSocketFactory {
  readonly sockets: FakeWhatsAppSocket[] = [];
  /** The next this many `create` calls fail, as when WhatsApp cannot be reached at all. */
  failures = 0;

  async create(options: WhatsAppSocketOptions): Promise<FakeWhatsAppSocket> {
    if (this.failures > 0) {
      this.failures--;
      throw new Error('getaddrinfo ENOTFOUND web.whatsapp.com');
    }
    const socket = new FakeWhatsAppSocket(options);
    this.sockets.push(socket);
    return socket;
  }

  get latest(): FakeWhatsAppSocket {
    const socket = this.sockets.at(-1);
    if (!socket) throw new Error('no socket was created');
    return socket;
  }
}

/** A received text message as Baileys v7 delivers it. */
export function incoming(fields: {
  id: string;
  from?: string;
  text?: string;
  message?: Record<string, unknown>;
  pushName?: string;
  at?: number;
  key?: Record<string, unknown>;
}): WhatsAppWebMessage {
  return {
    key: {
      remoteJid: fields.from ?? '14155551234@s.whatsapp.net',
      fromMe: false,
      id: fields.id,
      ...fields.key,
    },
    messageTimestamp: Math.floor((fields.at ?? 1_740_567_890_000) / 1000),
    pushName: fields.pushName ?? 'Alice',
    message: fields.message ?? {
      conversation: fields.text ?? 'Hey, are you around?',
    },
  };
}

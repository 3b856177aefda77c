import { Injectable, Logger } from '@nestjs/common';
import { mkdir } from 'node:fs/promises';
import type { WhatsAppSocket, WhatsAppSocketOptions } from './whatsapp-socket';
import { WhatsAppSocketFactory } from './whatsapp-socket';

/** Baileys' logger interface, kept quiet: its protocol chatter is not the owner's concern; warnings and errors go to Nest's log without payloads. */
function quietLogger(logger: Logger, bindings: Record<string, unknown> = {}) {
  const text = (obj: unknown, msg?: string) =>
    msg ?? (typeof obj === 'string' ? obj : 'baileys');
  const quiet = {
    level: 'warn',
    child: (more: Record<string, unknown>) =>
      quietLogger(logger, { ...bindings, ...more }),
    trace: () => undefined,
    debug: () => undefined,
    info: () => undefined,
    warn: (obj: unknown, msg?: string) => logger.warn(text(obj, msg)),
    error: (obj: unknown, msg?: string) => logger.error(text(obj, msg)),
  };
  return quiet;
}

/**
 * The production socket: `makeWASocket` with the multi-file auth state under
 * `<DATA_DIR>/whatsapp-auth`. Baileys is ESM-only; it is loaded here, on the
 * first connect, and nowhere else (Jest cannot load it; the built app does
 * through Node's require(esm)).
 */
@Injectable()
export class BaileysSocketFactory extends WhatsAppSocketFactory {
  private readonly logger = new Logger('WhatsApp');

  async create({ authDir }: WhatsAppSocketOptions): Promise<WhatsAppSocket> {
    const baileys = await import('baileys');
    await mkdir(authDir, { recursive: true, mode: 0o700 });
    const { state, saveCreds } = await baileys.useMultiFileAuthState(authDir);
    const socket = baileys.makeWASocket({
      auth: state,
      logger: quietLogger(this.logger),
      browser: baileys.Browsers.appropriate('MetatronOS'),
      markOnlineOnConnect: false,
      syncFullHistory: false,
    });
    socket.ev.on('creds.update', () => {
      saveCreds().catch((error: unknown) =>
        this.logger.error(
          `Could not save the WhatsApp session: ${(error as Error).message}`,
        ),
      );
    });
    return socket as unknown as WhatsAppSocket;
  }
}

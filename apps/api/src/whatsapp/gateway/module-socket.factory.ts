import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { WhatsAppSocket, WhatsAppSocketOptions } from './whatsapp-socket';
import { WhatsAppSocketFactory } from './whatsapp-socket';

/** What a `WHATSAPP_SOCKET_MODULE` file exports. */
interface SocketModule {
  createSocket(
    options: WhatsAppSocketOptions,
  ): WhatsAppSocket | Promise<WhatsAppSocket>;
}

/**
 * The operator seam behind `WHATSAPP_SOCKET_MODULE`: sockets come from a plain CommonJS
 * module (`createSocket(options)`) instead of Baileys. The browser tests use it to boot
 * the built server with a fake WhatsApp; it is loaded on the first connect.
 */
export class ModuleSocketFactory extends WhatsAppSocketFactory {
  private loaded: SocketModule | null = null;

  constructor(readonly modulePath: string) {
    super();
  }

  async create(options: WhatsAppSocketOptions): Promise<WhatsAppSocket> {
    return this.load().createSocket(options);
  }

  private load(): SocketModule {
    if (this.loaded) return this.loaded;
    // Node's own require (not the bundler's), anchored anywhere: the path is absolute.
    const required: unknown = createRequire(join(process.cwd(), 'noop.js'))(
      this.modulePath,
    );
    const createSocket = (required as Partial<SocketModule> | null)
      ?.createSocket;
    if (typeof createSocket !== 'function') {
      throw new Error(
        `WHATSAPP_SOCKET_MODULE (${this.modulePath}) does not export a createSocket(options) function`,
      );
    }
    this.loaded = { createSocket: (opts) => createSocket(opts) };
    return this.loaded;
  }
}

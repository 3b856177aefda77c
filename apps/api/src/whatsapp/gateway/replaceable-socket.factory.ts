import type { WhatsAppSocket, WhatsAppSocketOptions } from './whatsapp-socket';
import { WhatsAppSocketFactory } from './whatsapp-socket';

/**
 * The factory the service uses: Baileys unless something else was put in its
 * place (tests hand in fake sockets through `app.get(WhatsAppSocketFactory)`).
 */
export class ReplaceableSocketFactory extends WhatsAppSocketFactory {
  private current: WhatsAppSocketFactory;

  constructor(production: WhatsAppSocketFactory) {
    super();
    this.current = production;
  }

  replaceWith(factory: WhatsAppSocketFactory): void {
    this.current = factory;
  }

  create(options: WhatsAppSocketOptions): Promise<WhatsAppSocket> {
    return this.current.create(options);
  }
}

import { Injectable, Optional } from '@nestjs/common';
import { WhatsAppGateway } from '../gateway/whatsapp-gateway';

/**
 * The WhatsApp link as the tools and the prompt section see it. The gateway is
 * optional: without a WhatsApp module the app still starts, and WhatsApp just
 * counts as not connected.
 */
@Injectable()
export class WhatsAppLink {
  constructor(@Optional() private readonly gateway?: WhatsAppGateway) {}

  get connected(): boolean {
    return this.gateway?.status === 'connected';
  }

  get phoneNumber(): string | null {
    return this.gateway?.phoneNumber ?? null;
  }

  /** The gateway while connected; throws the tool's error otherwise. */
  use(): WhatsAppGateway {
    if (!this.gateway || this.gateway.status !== 'connected')
      throw new Error('WhatsApp is not connected');
    return this.gateway;
  }
}

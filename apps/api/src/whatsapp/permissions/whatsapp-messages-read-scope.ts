import { Injectable } from '@nestjs/common';
import type { MongoDocument } from '../../mongo-sandbox/mongo-operation';
import { SandboxReadScope } from '../../mongo-sandbox/sandbox-collection-owners';
import { WhatsAppPermissionsService } from './whatsapp-permissions.service';

/**
 * What db_query may read of `whatsapp_messages`: the messages of contacts with
 * canRead, exactly as whatsapp_read_messages (read fresh per call from the
 * service's copy, which every permission write drops).
 */
@Injectable()
export class WhatsAppMessagesReadScope extends SandboxReadScope {
  readonly collection = 'whatsapp_messages';

  constructor(private readonly permissions: WhatsAppPermissionsService) {
    super();
  }

  async visibleFilter(): Promise<MongoDocument> {
    return { phone: { $in: await this.permissions.readablePhones() } };
  }
}

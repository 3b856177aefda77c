import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { WhatsAppModule } from '../gateway/whatsapp.module';
import {
  WhatsAppPermissionRecord,
  WhatsAppPermissionSchema,
} from './schemas/whatsapp-permission.schema';
import { SandboxReadScope } from '../../mongo-sandbox/sandbox-collection-owners';
import { WhatsAppLink } from './whatsapp-link';
import { WhatsAppMode } from './whatsapp-mode';
import { WhatsAppMessagesReadScope } from './whatsapp-messages-read-scope';
import { WhatsAppInboundController } from './whatsapp-inbound.controller';
import { WhatsAppPermissionsController } from './whatsapp-permissions.controller';
import { WhatsAppPermissionsPromptSection } from './whatsapp-permissions-prompt-section';
import { WhatsAppPermissionsService } from './whatsapp-permissions.service';
import {
  WhatsAppListPermissionsTool,
  WhatsAppManagePermissionTool,
  WhatsAppReadMessagesTool,
  WhatsAppSendMessageTool,
} from './whatsapp-tools';

/**
 * Which WhatsApp contacts the AI may read from or reply to (`whatsapp_permissions`),
 * their REST routes, the four WhatsApp tools and the "WhatsApp Permissions"
 * prompt section. Uses the link only through the `WhatsAppGateway` token.
 */
@Module({
  imports: [
    WhatsAppModule,
    MongooseModule.forFeature([
      { name: WhatsAppPermissionRecord.name, schema: WhatsAppPermissionSchema },
    ]),
  ],
  controllers: [WhatsAppPermissionsController, WhatsAppInboundController],
  providers: [
    WhatsAppPermissionsService,
    WhatsAppLink,
    WhatsAppPermissionsPromptSection,
    WhatsAppMode,
    WhatsAppReadMessagesTool,
    WhatsAppSendMessageTool,
    WhatsAppManagePermissionTool,
    WhatsAppListPermissionsTool,
    // db_query sees only the messages of contacts with canRead.
    { provide: SandboxReadScope, useClass: WhatsAppMessagesReadScope },
  ],
  exports: [WhatsAppPermissionsService],
})
export class WhatsAppPermissionsModule {}

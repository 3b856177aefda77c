import { BudgetModule } from '../budget/budget.module';
import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AttachmentsModule } from '../attachments/attachments.module';
import { ChatsModule } from '../chats/chats.module';
import { FilesModule } from '../files/files.module';
import { SandboxReadScope } from '../mongo-sandbox/sandbox-collection-owners';
import { SettingsModule } from '../settings/settings.module';
import { WhatsAppAutoReplyModule } from '../whatsapp/auto-reply/whatsapp-auto-reply.module';
import {
  TelegramPermissionRecord,
  TelegramPermissionSchema,
} from './schemas/telegram-permission.schema';
import { TelegramAutoReplyService } from './telegram-auto-reply.service';
import { TelegramBotService, TelegramGateway } from './telegram-bot.service';
import { TelegramChatDirectory } from './telegram-chat-directory';
import { TelegramContactChannel } from './telegram-contact-channel';
import { TelegramController } from './telegram.controller';
import { TelegramMessagesReadScope } from './telegram-messages-read-scope';
import { TelegramPermissionsService } from './telegram-permissions.service';
import {
  TelegramListPermissionsTool,
  TelegramManagePermissionTool,
  TelegramMode,
  TelegramReactTool,
  TelegramSendFileTool,
  TelegramSendVoiceTool,
} from './telegram-tools';

/**
 * Telegram, the second channel: the bot's long polling (grammY against the Bot
 * API or a self-hosted server), its permissions, and its port to the shared
 * auto-reply. The auto-reply limits are the same settings as WhatsApp's.
 */
@Module({
  imports: [
    AttachmentsModule,
    BudgetModule,
    ChatsModule,
    FilesModule,
    SettingsModule,
    WhatsAppAutoReplyModule,
    MongooseModule.forFeature([
      { name: TelegramPermissionRecord.name, schema: TelegramPermissionSchema },
    ]),
  ],
  controllers: [TelegramController],
  providers: [
    TelegramBotService,
    { provide: TelegramGateway, useExisting: TelegramBotService },
    TelegramPermissionsService,
    TelegramAutoReplyService,
    TelegramMode,
    TelegramReactTool,
    TelegramSendFileTool,
    TelegramSendVoiceTool,
    TelegramListPermissionsTool,
    TelegramManagePermissionTool,
    { provide: SandboxReadScope, useClass: TelegramMessagesReadScope },
    TelegramChatDirectory,
    TelegramContactChannel,
  ],
  exports: [TelegramGateway, TelegramPermissionsService],
})
export class TelegramModule {}

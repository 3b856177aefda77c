import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AiToolsModule } from '../ai-tools/ai-tools.module';
import { AttachmentsModule } from '../attachments/attachments.module';
import { LlmModule } from '../llm/llm.module';
import { CallTranscripts } from './call-transcripts';
import { ChatCache } from './chat-cache';
import { ChatModes } from './chat-modes';
import { ChatReplyService } from './chat-reply.service';
import { ChatSearchIndex } from './chat-search-index';
import { ChatsController } from './chats.controller';
import { ChatsService, RunningReplies } from './chats.service';
import { ChatRecord, ChatSchema } from './schemas/chat.schema';
import { MessageRecord, MessageSchema } from './schemas/message.schema';

@Module({
  imports: [
    AiToolsModule,
    AttachmentsModule,
    LlmModule,
    MongooseModule.forFeature([
      { name: ChatRecord.name, schema: ChatSchema },
      { name: MessageRecord.name, schema: MessageSchema },
    ]),
  ],
  controllers: [ChatsController],
  providers: [
    ChatsService,
    ChatReplyService,
    ChatCache,
    ChatModes,
    ChatSearchIndex,
    CallTranscripts,
    { provide: RunningReplies, useExisting: ChatReplyService },
  ],
  exports: [ChatsService, ChatReplyService, CallTranscripts],
})
export class ChatsModule {}

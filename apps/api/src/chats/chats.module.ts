import { Module } from '@nestjs/common';
import { MongooseModule, getModelToken } from '@nestjs/mongoose';
import type { Collection } from 'mongodb';
import type { Model } from 'mongoose';
import { AiToolsModule } from '../ai-tools/ai-tools.module';
import { AttachmentsModule } from '../attachments/attachments.module';
import { driverCollection } from '../database/driver-collection';
import { LlmModule } from '../llm/llm.module';
import { SystemInstructionModule } from '../system-instruction/system-instruction.module';
import { CallTranscripts } from './call-transcripts';
import { ChatCache } from './chat-cache';
import { ChatList } from './chat-list';
import { ChatModes } from './chat-modes';
import { ChatPromptPreviewer } from './chat-prompt-preview';
import { ChatReplyService } from './chat-reply.service';
import { ChatSearchIndex } from './chat-search-index';
import { LiveVoiceCall } from './live-voice-call';
import { ChatVersions } from './chat-versions';
import { ChatWrites } from './chat-writes';
import { ChatsController } from './chats.controller';
import { MessageWrites } from './message-writes';
import { ChatsService, RunningReplies } from './chats.service';
import { ChatRecord, ChatSchema } from './schemas/chat.schema';
import { MessageRecord, MessageSchema } from './schemas/message.schema';

@Module({
  imports: [
    AiToolsModule,
    AttachmentsModule,
    LlmModule,
    SystemInstructionModule,
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
    ChatList,
    ChatModes,
    ChatPromptPreviewer,
    ChatSearchIndex,
    ChatVersions,
    CallTranscripts,
    LiveVoiceCall,
    {
      provide: ChatWrites,
      useFactory: (chats: Model<ChatRecord>) =>
        new ChatWrites(() =>
          driverCollection(
            chats.collection as unknown as Collection<ChatRecord>,
          ),
        ),
      inject: [getModelToken(ChatRecord.name)],
    },
    {
      provide: MessageWrites,
      useFactory: (messages: Model<MessageRecord>) =>
        new MessageWrites(() =>
          driverCollection(
            messages.collection as unknown as Collection<MessageRecord>,
          ),
        ),
      inject: [getModelToken(MessageRecord.name)],
    },
    { provide: RunningReplies, useExisting: ChatReplyService },
  ],
  exports: [ChatsService, ChatReplyService, CallTranscripts, LiveVoiceCall],
})
export class ChatsModule {}

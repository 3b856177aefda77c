import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { MongooseModule } from '@nestjs/mongoose';
import { ChatRecord, ChatSchema } from '../chats/schemas/chat.schema';
import { MessageRecord, MessageSchema } from '../chats/schemas/message.schema';
import { BudgetModule } from '../budget/budget.module';
import { ModelJsonClient } from '../files/plan/model-json-client';
import { LlmAdapterFactory } from '../llm/llm-adapter.factory';
import { SecretsModule } from '../secrets/secrets.module';
import { UsageModule } from '../usage/usage.module';
import { MemoryEmbeddings } from './embeddings/memory-embeddings';
import { SettingsModule } from '../settings/settings.module';
import { SystemInstructionModule } from '../system-instruction/system-instruction.module';
import { MemoriesController } from './memories.controller';
import { MemoryConsolidation } from './memory-consolidation';
import { MemoryIndex } from './memory-index';
import { MemoryNoteRecord, MemoryNoteSchema } from './memory-note.schema';
import { MemoryRecallPromptSection } from './memory-recall-prompt-section';
import { MemoryRunRecord, MemoryRunSchema } from './memory-run.schema';
import { ForgetTool, MemorySearchTool, RememberTool } from './memory-tools';
import { MemoryService } from './memory.service';
import { VisibleChats } from './visible-chats';

/**
 * Memory notes with their sources (`memories`), the search over notes and every
 * chat the owner may see, the tools `remember`, `forget` and `memory_search` (default
 * mode), the recalled-notes prompt section and `/api/memories`.
 */
@Module({
  imports: [
    DiscoveryModule,
    SettingsModule,
    SecretsModule,
    // The recall begun at a message's acceptance checks the memory toggle the prompt obeys.
    SystemInstructionModule,
    // The consolidation's model call is metered (source `memory`) and held to the budget.
    UsageModule,
    BudgetModule,
    MongooseModule.forFeature([
      { name: MemoryNoteRecord.name, schema: MemoryNoteSchema },
      { name: MemoryRunRecord.name, schema: MemoryRunSchema },
      { name: ChatRecord.name, schema: ChatSchema },
      { name: MessageRecord.name, schema: MessageSchema },
    ]),
  ],
  controllers: [MemoriesController],
  providers: [
    MemoryIndex,
    MemoryEmbeddings,
    VisibleChats,
    MemoryService,
    RememberTool,
    ForgetTool,
    MemorySearchTool,
    MemoryRecallPromptSection,
    MemoryConsolidation,
    LlmAdapterFactory,
    ModelJsonClient,
  ],
  exports: [MemoryService, MemoryConsolidation, MemoryEmbeddings],
})
export class MemoryModule {}

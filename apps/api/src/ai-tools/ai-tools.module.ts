import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { MongoSandboxModule } from '../mongo-sandbox/mongo-sandbox.module';
import { SystemInstructionModule } from '../system-instruction/system-instruction.module';
import { AiToolRegistry } from './ai-tool-registry';
import { AvailableToolsPromptSection } from './available-tools-prompt-section';
import { DbQueryTool } from './core-tools/db-query.tool';
import { SaveMemoryTool } from './core-tools/save-memory.tool';
import { UpdateDbSchemaTool } from './core-tools/update-db-schema.tool';

/**
 * The tool registry and the three core tools. Feature modules add tools by
 * providing a class marked `@AiToolProvider()`; nothing here changes.
 */
@Module({
  imports: [DiscoveryModule, MongoSandboxModule, SystemInstructionModule],
  providers: [
    AiToolRegistry,
    AvailableToolsPromptSection,
    SaveMemoryTool,
    DbQueryTool,
    UpdateDbSchemaTool,
  ],
  exports: [AiToolRegistry],
})
export class AiToolsModule {}

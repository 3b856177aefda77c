import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AccountsModule } from '../accounts/accounts.module';
import { AccountsAiDirectory } from '../accounts/accounts-store';
import { MongoSandboxModule } from '../mongo-sandbox/mongo-sandbox.module';
import { SystemInstructionModule } from '../system-instruction/system-instruction.module';
import { SettingsModule } from '../settings/settings.module';
import { AI_ACCOUNT_DIRECTORY } from './ai-tool';
import { AiToolRegistry } from './ai-tool-registry';
import { DataMode, DefaultMode } from './modes/core-modes';
import { DisabledToolsCheck } from './modes/disabled-tools-check';
import { SelectAccountTool } from './modes/select-account.tool';
import { SetModeTool } from './modes/set-mode.tool';
import { ToolsController } from './tools.controller';
import { AvailableToolsPromptSection } from './available-tools-prompt-section';
import { DbQueryTool } from './core-tools/db-query.tool';
import { SaveMemoryTool } from './core-tools/save-memory.tool';
import { UpdateDbSchemaTool } from './core-tools/update-db-schema.tool';

/**
 * The tool registry, the modes `default` and `data`, the meta tools (`set_mode`,
 * `select_account`) and the three core tools. Feature modules add tools by
 * providing a class marked `@AiToolProvider()`; nothing here changes.
 */
@Module({
  imports: [
    DiscoveryModule,
    AccountsModule,
    MongoSandboxModule,
    SystemInstructionModule,
    SettingsModule,
  ],
  controllers: [ToolsController],
  providers: [
    AiToolRegistry,
    AvailableToolsPromptSection,
    DisabledToolsCheck,
    { provide: AI_ACCOUNT_DIRECTORY, useExisting: AccountsAiDirectory },
    DefaultMode,
    DataMode,
    SetModeTool,
    SelectAccountTool,
    SaveMemoryTool,
    DbQueryTool,
    UpdateDbSchemaTool,
  ],
  exports: [AiToolRegistry, AI_ACCOUNT_DIRECTORY],
})
export class AiToolsModule {}

import { Module } from '@nestjs/common';
import { LlmAdapterFactory } from '../llm/llm-adapter.factory';
import { SecretsModule } from '../secrets/secrets.module';
import { BudgetModule } from '../budget/budget.module';
import { SettingsModule } from '../settings/settings.module';
import { UsageModule } from '../usage/usage.module';
import { BashSandbox } from './bash/bash-sandbox';
import { BashTool } from './bash/bash.tool';
import { CachePruner } from './cache-pruner';
import { FileDirs } from './file-dirs';
import { FilesMode } from './files-mode';
import { ReadFileTool } from './tools/read-file.tool';
import { WriteFileTool } from './tools/write-file.tool';
import { FilesController } from './files.controller';
import { ModelJsonClient } from './plan/model-json-client';
import { PlanCreateTool } from './plan/plan-create.tool';
import { TodoStore } from './todo/todo-store';
import { TodoMode, TodoUpdateTool } from './todo/todo-update.tool';

/**
 * The toolbelt's two file dirs under DATA_DIR (file tools, bash, downloads, the Files
 * page and its routes), the `files` mode with read_file, write_file and the sandboxed
 * bash, the cache dir's pruning, and the `todo` mode with todo_update and plan_create.
 */
@Module({
  // The helper calls of todo_update and plan_create are metered and held to the budget like any turn.
  imports: [SettingsModule, SecretsModule, UsageModule, BudgetModule],
  controllers: [FilesController],
  providers: [
    FileDirs,
    CachePruner,
    FilesMode,
    ReadFileTool,
    WriteFileTool,
    BashSandbox,
    BashTool,
    LlmAdapterFactory,
    ModelJsonClient,
    TodoStore,
    TodoMode,
    TodoUpdateTool,
    PlanCreateTool,
  ],
  exports: [FileDirs],
})
export class FilesModule {}

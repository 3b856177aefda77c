import { Module } from '@nestjs/common';
import { LlmAdapterFactory } from '../llm/llm-adapter.factory';
import { SettingsModule } from '../settings/settings.module';
import { FileDirs } from './file-dirs';
import { FilesController } from './files.controller';
import { ModelJsonClient } from './plan/model-json-client';
import { PlanCreateTool } from './plan/plan-create.tool';
import { TodoStore } from './todo/todo-store';
import { TodoMode, TodoUpdateTool } from './todo/todo-update.tool';

/** The toolbelt's two file dirs under DATA_DIR (file tools, bash, downloads, the Files page). */
@Module({
  imports: [SettingsModule],
  controllers: [FilesController],
  providers: [
    FileDirs,
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

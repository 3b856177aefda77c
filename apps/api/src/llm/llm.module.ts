import { Module } from '@nestjs/common';
import { AiToolsModule } from '../ai-tools/ai-tools.module';
import { BudgetModule } from '../budget/budget.module';
import { SettingsModule } from '../settings/settings.module';
import { SystemInstructionModule } from '../system-instruction/system-instruction.module';
import { UsageModule } from '../usage/usage.module';
import { LlmAdapterFactory } from './llm-adapter.factory';
import { LlmRunner } from './llm-runner';

/** The turn runner and the provider adapters. Chats, jobs, Pulse and auto-reply run their turns through ChatsModule. */
@Module({
  imports: [
    SettingsModule,
    SystemInstructionModule,
    AiToolsModule,
    UsageModule,
    BudgetModule,
  ],
  providers: [LlmRunner, LlmAdapterFactory],
  exports: [LlmRunner],
})
export class LlmModule {}

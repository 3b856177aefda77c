import { Global, Module } from '@nestjs/common';
import { LlmAdapterFactory } from './llm-adapter.factory';
import { LlmRunner } from './llm-runner';

/** The turn runner and the provider adapters. Global: chats, cron, Pulse and auto-reply all run turns. */
@Global()
@Module({
  providers: [LlmRunner, LlmAdapterFactory],
  exports: [LlmRunner],
})
export class LlmModule {}

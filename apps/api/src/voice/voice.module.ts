import { Module } from '@nestjs/common';
import { ActionsModule } from '../actions/actions.module';
import { AiToolsModule } from '../ai-tools/ai-tools.module';
import { ChatsModule } from '../chats/chats.module';
import { LlmModule } from '../llm/llm.module';
import { SettingsModule } from '../settings/settings.module';
import { UsageModule } from '../usage/usage.module';
import { VoiceController } from './voice.controller';
import {
  OpenAiRealtimeFactory,
  RealtimeProviderFactory,
  VoiceCallsService,
} from './voice-calls.service';

/** Realtime voice calls: the provider port, its OpenAI GA adapter, and the live call. */
@Module({
  imports: [
    ActionsModule,
    AiToolsModule,
    ChatsModule,
    LlmModule,
    SettingsModule,
    UsageModule,
  ],
  controllers: [VoiceController],
  providers: [
    VoiceCallsService,
    { provide: RealtimeProviderFactory, useClass: OpenAiRealtimeFactory },
  ],
  exports: [VoiceCallsService],
})
export class VoiceModule {}

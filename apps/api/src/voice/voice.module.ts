import { Module } from '@nestjs/common';
import { ActionsModule } from '../actions/actions.module';
import { AiToolsModule } from '../ai-tools/ai-tools.module';
import { BudgetModule } from '../budget/budget.module';
import { ChatsModule } from '../chats/chats.module';
import { LlmModule } from '../llm/llm.module';
import { SettingsModule } from '../settings/settings.module';
import { UsageModule } from '../usage/usage.module';
import { GeminiRelayService } from './gemini-relay.service';
import { VoiceController } from './voice.controller';
import { VoiceRelayController } from './voice-relay.controller';
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
    BudgetModule,
    ChatsModule,
    LlmModule,
    SettingsModule,
    UsageModule,
  ],
  controllers: [VoiceController, VoiceRelayController],
  providers: [
    VoiceCallsService,
    GeminiRelayService,
    { provide: RealtimeProviderFactory, useClass: OpenAiRealtimeFactory },
  ],
  exports: [VoiceCallsService],
})
export class VoiceModule {}

import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { ScheduleModule } from '@nestjs/schedule';
import { AuthModule } from '../auth/auth.module';
import { SessionGuard } from '../auth/session.guard';
import { Clock, SystemClock } from '../clock/clock';
import { ClockModule } from '../clock/clock.module';
import { PasswordHasher } from '../auth/password-hasher';
import type { AppConfig } from '../config/app-config';
import { AppConfigModule } from '../config/app-config.module';
import { DatabaseAvailableGuard } from '../database/database-available.guard';
import { DatabaseModule } from '../database/database.module';
import type { DatabaseRuntime } from '../database/database-runtime';
import { EventsModule } from '../events/events.module';
import { HealthModule } from '../health/health.module';
import { SystemModule } from '../system/system.module';
import { AccountsModule } from '../accounts/accounts.module';
import { AiToolsModule } from '../ai-tools/ai-tools.module';
import { AutomationsModule } from '../automations/automations.module';
import { ChatsModule } from '../chats/chats.module';
import { CronModule } from '../automations/jobs/cron.module';
import { PulseModule } from '../automations/pulse/pulse.module';
import { WebSearchModule } from '../web-search/web-search.module';
import { UrlFetchModule } from '../url-fetch/url-fetch.module';
import { FilesModule } from '../files/files.module';
import { MediaModule } from '../media/media.module';
import { AttachmentsModule } from '../attachments/attachments.module';
import { ContactsModule } from '../contacts/contacts.module';
import { DataModule } from '../data/data.module';
import { LlmModule } from '../llm/llm.module';
import { PersonalDataModule } from '../data/personal/personal-data.module';
import { SettingsModule } from '../settings/settings.module';
import { SystemInstructionModule } from '../system-instruction/system-instruction.module';
import type { WhatsAppGateway } from '../whatsapp/gateway/whatsapp-gateway';
import {
  WHATSAPP_GATEWAY_STAND_IN,
  WhatsAppModule,
} from '../whatsapp/gateway/whatsapp.module';
import { WhatsAppPermissionsModule } from '../whatsapp/permissions/whatsapp-permissions.module';
import { WhatsAppAutoReplyModule } from '../whatsapp/auto-reply/whatsapp-auto-reply.module';
import { TelegramModule } from '../telegram/telegram.module';
import { ChannelsModule } from '../channels/channels.module';
import { UsageModule } from '../usage/usage.module';
import { BudgetModule } from '../budget/budget.module';
import { VoiceModule } from '../voice/voice.module';
import { BackupModule } from '../backup/backup.module';
import { CalendarModule } from '../accounts/calendar/calendar.module';
import { EmailModule } from '../accounts/email/email.module';
import { ActionsModule } from '../actions/actions.module';
import { MemoryModule } from '../memory/memory.module';
import { McpServerModule } from '../mcp-server/mcp-server.module';
import { McpModule } from '../mcp/mcp.module';
import { LearningModule } from '../learning/learning.module';
import { RelaxModule } from '../relax/relax.module';

export interface AppModuleOptions {
  config: AppConfig;
  database: DatabaseRuntime;
  /** Composition-root overrides (tests move time and use a cheaper hash). */
  clock?: Clock;
  passwordHasher?: PasswordHasher;
  /** Test-only: a fake WhatsApp link that permissions, tools and auto-reply use instead of the real one. */
  whatsappGateway?: WhatsAppGateway;
}

/** A global module holding the test's WhatsApp stand-in, so WhatsAppModule can find it. */
class WhatsAppGatewayStandInModule {}

/**
 * The composition root. Global modules are only the app-wide ones: the clock, the
 * config, the database connection and the event bus. Every other module imports
 * what it uses.
 */
@Module({})
export class AppModule {
  static forRoot({
    config,
    database,
    clock,
    passwordHasher,
    whatsappGateway,
  }: AppModuleOptions): DynamicModule {
    const standIn: DynamicModule[] = whatsappGateway
      ? [
          {
            module: WhatsAppGatewayStandInModule,
            global: true,
            providers: [
              { provide: WHATSAPP_GATEWAY_STAND_IN, useValue: whatsappGateway },
            ],
            exports: [WHATSAPP_GATEWAY_STAND_IN],
          },
        ]
      : [];
    return {
      module: AppModule,
      imports: [
        ClockModule.forRoot(clock ?? new SystemClock()),
        AppConfigModule.forRoot(config),
        // Many services drop what they hold on `backup.restored`: past 10 listeners EventEmitter2 warns, and its
        // warning throws on this Node version.
        EventEmitterModule.forRoot({ wildcard: false, maxListeners: 50 }),
        ScheduleModule.forRoot(),
        DatabaseModule.forRoot(database),
        EventsModule,
        ...standIn,
        AuthModule.forRoot(passwordHasher),
        HealthModule,
        SystemModule,
        SettingsModule,
        SystemInstructionModule,
        PersonalDataModule,
        AiToolsModule,
        AccountsModule,
        LlmModule,
        ChatsModule,
        DataModule,
        AutomationsModule,
        CronModule,
        PulseModule,
        WebSearchModule,
        UrlFetchModule,
        FilesModule,
        MediaModule,
        AttachmentsModule,
        WhatsAppModule,
        WhatsAppPermissionsModule,
        WhatsAppAutoReplyModule,
        TelegramModule,
        ChannelsModule,
        ContactsModule,
        UsageModule,
        BudgetModule,
        VoiceModule,
        BackupModule,
        CalendarModule,
        EmailModule,
        ActionsModule,
        MemoryModule,
        McpServerModule,
        McpModule,
        LearningModule,
        RelaxModule,
      ],
      providers: [
        // Order matters: a dead database answers 503 before the session lookup would hang on it.
        { provide: APP_GUARD, useExisting: DatabaseAvailableGuard },
        { provide: APP_GUARD, useExisting: SessionGuard },
      ],
    };
  }
}

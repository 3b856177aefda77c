import { DynamicModule, Module, type Provider } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { ScheduleModule } from '@nestjs/schedule';
import { AuthModule } from '../auth/auth.module';
import { SessionGuard } from '../auth/session.guard';
import { Clock, SystemClock } from '../clock/clock';
import { ClockModule } from '../clock/clock.module';
import { PasswordHasher } from '../auth/password-hasher';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { DatabaseAvailableGuard } from '../database/database-available.guard';
import { DatabaseModule } from '../database/database.module';
import type { DatabaseRuntime } from '../database/database-runtime';
import { EventsModule } from '../events/events.module';
import { HealthModule } from '../health/health.module';
import { SystemModule } from '../system/system.module';
import { AiToolsModule } from '../ai-tools/ai-tools.module';
import { AutomationsModule } from '../automations/automations.module';
import { ChatsModule } from '../chats/chats.module';
import { CronModule } from '../automations/jobs/cron.module';
import { PulseModule } from '../automations/pulse/pulse.module';
import { WebSearchModule } from '../web-search/web-search.module';
import { MediaModule } from '../media/media.module';
import { AttachmentsModule } from '../attachments/attachments.module';
import { DataModule } from '../data/data.module';
import { LlmModule } from '../llm/llm.module';
import { PersonalDataModule } from '../data/personal/personal-data.module';
import { SettingsModule } from '../settings/settings.module';
import { SystemInstructionModule } from '../system-instruction/system-instruction.module';
import { WhatsAppModule } from '../whatsapp/gateway/whatsapp.module';
import { WhatsAppPermissionsModule } from '../whatsapp/permissions/whatsapp-permissions.module';
import { WhatsAppAutoReplyModule } from '../whatsapp/auto-reply/whatsapp-auto-reply.module';

export interface AppModuleOptions {
  config: AppConfig;
  database: DatabaseRuntime;
  /** Composition-root overrides (tests move time and use a cheaper hash). */
  clock?: Clock;
  passwordHasher?: PasswordHasher;
  /**
   * Test-only: providers (e.g. a fake `WhatsAppGateway`) added to this global
   * module and exported, so modules that do not provide the token themselves
   * resolve these.
   */
  providers?: Array<Provider & { provide: unknown }>;
}

@Module({})
export class AppModule {
  static forRoot({
    config,
    database,
    clock,
    passwordHasher,
    providers = [],
  }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        ClockModule.forRoot(clock ?? new SystemClock()),
        EventEmitterModule.forRoot({ wildcard: false }),
        ScheduleModule.forRoot(),
        DatabaseModule.forRoot(database),
        EventsModule,
        AuthModule,
        HealthModule,
        SystemModule,
        SettingsModule,
        SystemInstructionModule,
        PersonalDataModule,
        AiToolsModule,
        LlmModule,
        ChatsModule,
        DataModule,
        AutomationsModule,
        CronModule,
        PulseModule,
        WebSearchModule,
        MediaModule,
        AttachmentsModule,
        WhatsAppModule,
        WhatsAppPermissionsModule,
        WhatsAppAutoReplyModule,
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        {
          provide: PasswordHasher,
          useValue: passwordHasher ?? new PasswordHasher(),
        },
        // Order matters: a dead database answers 503 before the session lookup would hang on it.
        { provide: APP_GUARD, useExisting: DatabaseAvailableGuard },
        { provide: APP_GUARD, useExisting: SessionGuard },
        ...providers,
      ],
      // WhatsAppModule is re-exported so its `WhatsAppGateway` reaches every module through this global one;
      // a test's override of the same token is found first (a direct export of this module).
      exports: [
        APP_CONFIG,
        PasswordHasher,
        WhatsAppModule,
        ...providers.map((p) => p.provide as string | symbol),
      ],
    };
  }
}

import { DynamicModule, Logger, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { ScheduleModule } from '@nestjs/schedule';
import { ServeStaticModule } from '@nestjs/serve-static';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Response } from 'express';
import { AuthModule } from '../auth/auth.module';
import { SessionGuard } from '../auth/session.guard';
import { ClockModule } from '../clock/clock.module';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { DatabaseAvailableGuard } from '../database/database-available.guard';
import { DatabaseModule } from '../database/database.module';
import type { DatabaseRuntime } from '../database/database-runtime';
import { EventsModule } from '../events/events.module';
import { HealthModule } from '../health/health.module';
import { SystemModule } from '../system/system.module';

export interface AppModuleOptions {
  config: AppConfig;
  database: DatabaseRuntime;
}

@Module({})
export class AppModule {
  static forRoot({ config, database }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        ClockModule,
        EventEmitterModule.forRoot({ wildcard: false }),
        ScheduleModule.forRoot(),
        DatabaseModule.forRoot(database),
        EventsModule,
        AuthModule,
        HealthModule,
        SystemModule,
        ...consoleModule(config.webDistDir),
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        // Order matters: a dead database answers 503 before the session lookup would hang on it.
        { provide: APP_GUARD, useExisting: DatabaseAvailableGuard },
        { provide: APP_GUARD, useExisting: SessionGuard },
      ],
      exports: [APP_CONFIG],
    };
  }
}

/** Serves the built Angular console at `/` with SPA fallback; API paths are never answered with index.html. */
function consoleModule(webDistDir: string): DynamicModule[] {
  if (!existsSync(join(webDistDir, 'index.html'))) {
    new Logger('Console').warn(`The console is not built (${webDistDir}/index.html missing); serving the API only.`);
    return [];
  }
  return [
    ServeStaticModule.forRoot({
      rootPath: webDistDir,
      exclude: ['/api/{*path}'],
      serveStaticOptions: {
        setHeaders: (res: Response, path: string) => {
          // Hashed bundles never change; index.html must be revalidated to pick up a new build.
          res.setHeader('Cache-Control', path.endsWith('.html') ? 'no-cache' : 'public, max-age=31536000, immutable');
        },
      },
    }),
  ];
}

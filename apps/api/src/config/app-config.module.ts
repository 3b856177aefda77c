import { DynamicModule, Global, Module } from '@nestjs/common';
import type { AppConfig } from './app-config';
import { APP_CONFIG } from './app-config.provider';

/**
 * The validated `AppConfig` under `APP_CONFIG`. Global: it is read once at boot and
 * nearly every feature takes its paths, limits and peers' base URLs from it.
 */
@Global()
@Module({})
export class AppConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppConfigModule,
      providers: [{ provide: APP_CONFIG, useValue: config }],
      exports: [APP_CONFIG],
    };
  }
}

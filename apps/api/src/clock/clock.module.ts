import { DynamicModule, Global, Module } from '@nestjs/common';
import { Clock } from './clock';

/** The one `Clock` every feature reads time from (tests hand in a `ManualClock`). Global: time is app-wide. */
@Global()
@Module({})
export class ClockModule {
  static forRoot(clock: Clock): DynamicModule {
    return {
      module: ClockModule,
      providers: [{ provide: Clock, useValue: clock }],
      exports: [Clock],
    };
  }
}

import { Global, Module } from '@nestjs/common';
import { AppEventBus } from './app-event-bus';
import { EventsController } from './events.controller';

/** The typed event bus and `GET /api/events`. Global: every feature publishes its changes on it. */
@Global()
@Module({
  providers: [AppEventBus],
  controllers: [EventsController],
  exports: [AppEventBus],
})
export class EventsModule {}

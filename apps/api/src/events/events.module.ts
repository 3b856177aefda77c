import { Global, Module } from '@nestjs/common';
import { AppEventBus } from './app-event-bus';
import { EventsController } from './events.controller';

@Global()
@Module({
  providers: [AppEventBus],
  controllers: [EventsController],
  exports: [AppEventBus],
})
export class EventsModule {}

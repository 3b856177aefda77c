import { Controller, MessageEvent, Sse } from '@nestjs/common';
import {
  ApiCookieAuth,
  ApiOperation,
  ApiProduces,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Observable, concat, interval, map, merge, of, takeWhile } from 'rxjs';
import { EVENTS_HEARTBEAT_EVENT } from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import { DatabaseHealthService } from '../database/database-health.service';
import { AppEventBus } from './app-event-bus';

const HEARTBEAT_MS = 25_000;

@ApiTags('system')
@ApiCookieAuth()
@Controller('events')
export class EventsController {
  constructor(
    private readonly events: AppEventBus,
    private readonly health: DatabaseHealthService,
    private readonly clock: Clock,
  ) {}

  @Sse()
  @ApiOperation({
    summary: 'Server-sent events of the app event bus',
    description:
      'Each SSE `event:` is a name from the shared event map (e.g. `database.status`) and `data:` its JSON payload. ' +
      'The stream opens with the current `database.status` and sends a `heartbeat` every 25 s. ' +
      'When the server stops, `shutdown` is the last event and the stream ends.',
  })
  @ApiProduces('text/event-stream')
  @ApiUnauthorizedResponse({ description: 'No owner session' })
  stream(): Observable<MessageEvent> {
    const snapshot = of<MessageEvent>({
      type: 'database.status',
      data: { status: this.health.status, at: this.clock.now().toISOString() },
    });
    const live = this.events
      .stream()
      .pipe(
        map(
          (event): MessageEvent => ({ type: event.name, data: event.payload }),
        ),
      );
    const heartbeat = interval(HEARTBEAT_MS).pipe(
      map(
        (): MessageEvent => ({
          type: EVENTS_HEARTBEAT_EVENT,
          data: { at: this.clock.now().toISOString() },
        }),
      ),
    );
    // The bus ends with `shutdown`; the heartbeat stops with it, so the response ends.
    return concat(
      snapshot,
      merge(live, heartbeat).pipe(
        takeWhile((event) => event.type !== 'shutdown', true),
      ),
    );
  }
}

import { signal } from '@angular/core';
import { Subject, filter, map } from 'rxjs';
import type { AppEventMap, AppEventName } from '@metatronos/shared-types';
import type { AppEvent, EventStreamState } from '../core/event-stream';

/** For specs: stands in for the SSE connection of `EventStream`; the test pushes events by hand. */
export class FakeEventStream {
  readonly state = signal<EventStreamState>('open');
  private readonly events = new Subject<AppEvent>();
  /** How often `reconnect()` was called. */
  reconnects = 0;

  reconnect(): void {
    this.reconnects++;
  }

  on<K extends AppEventName>(name: K) {
    return this.events.pipe(
      filter((event) => event.name === name),
      map((event) => event.data as AppEventMap[K]),
    );
  }

  emit<K extends AppEventName>(name: K, data: AppEventMap[K]): void {
    this.events.next({ name, data } as AppEvent);
  }

  get observed(): boolean {
    return this.events.observed;
  }
}

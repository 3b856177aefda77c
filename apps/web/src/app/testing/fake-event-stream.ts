import { signal } from '@angular/core';
import { Subject, filter, map } from 'rxjs';
import type { AppEventMap, AppEventName } from '@metatronos/shared-types';
import type { AppEvent, EventStreamState } from '../core/event-stream';

/** For specs: stands in for the SSE connection of `EventStream`; the test pushes events by hand. */
export class FakeEventStream {
  readonly state = signal<EventStreamState>('open');
  private readonly transitions = new Subject<EventStreamState>();
  readonly stateChanges$ = this.transitions.asObservable();
  private readonly events = new Subject<AppEvent>();
  /** Moves the connection to `state`, as the real stream does on open/error. */
  setState(state: EventStreamState): void {
    if (this.state() === state) return;
    this.state.set(state);
    this.transitions.next(state);
  }

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

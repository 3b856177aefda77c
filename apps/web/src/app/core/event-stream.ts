import { Injectable, InjectionToken, inject, signal } from '@angular/core';
import { Observable, Subject, filter, map, share } from 'rxjs';
import {
  APP_EVENT_NAMES,
  type AppEventMap,
  type AppEventName,
} from '@metatronos/shared-types';
import { API_BASE } from './api-client';

/** One event from `GET /api/events`, discriminated by its SSE name. */
export type AppEvent = {
  [K in AppEventName]: { name: K; data: AppEventMap[K] };
}[AppEventName];

export type EventStreamState = 'closed' | 'connecting' | 'open';

/** The part of the browser's EventSource the stream uses (so tests can pass a fake). */
export interface EventSourceLike {
  readonly readyState: number;
  onopen: ((event: Event) => void) | null;
  onerror: ((event: Event) => void) | null;
  addEventListener(
    type: string,
    listener: (event: MessageEvent<string>) => void,
  ): void;
  close(): void;
}

export const EVENT_SOURCE_FACTORY = new InjectionToken<
  (url: string) => EventSourceLike
>('EVENT_SOURCE_FACTORY', {
  providedIn: 'root',
  factory: () => (url: string) => new EventSource(url),
});

export const EVENTS_URL = `${API_BASE}/events`;

/** EventSource.CLOSED: the browser gave up (e.g. a 401 or 503 answer) and will not reconnect by itself. */
const CLOSED = 2;
const RECONNECT_DELAYS_MS = [2_000, 5_000, 10_000, 30_000];

/**
 * The server's live events as an Observable. All subscribers share one EventSource, opened on the first
 * subscription and closed when the last one unsubscribes. Network drops are retried by the browser; when the
 * browser gives up (HTTP error), the stream reconnects itself with a growing delay.
 */
@Injectable({ providedIn: 'root' })
export class EventStream {
  private readonly createSource = inject(EVENT_SOURCE_FACTORY);
  private readonly connection = signal<EventStreamState>('closed');

  readonly state = this.connection.asReadonly();
  private readonly transitions = new Subject<EventStreamState>();
  /**
   * Every change of `state`, as it happens. Unlike the signal (read by effects, which see only the latest
   * value), no quick open → connecting → open flip is lost.
   */
  readonly stateChanges$: Observable<EventStreamState> =
    this.transitions.asObservable();
  /** Set while subscribed: skips a pending backoff and connects now (unless the stream is open). */
  private connectNow: (() => void) | null = null;

  readonly events$: Observable<AppEvent> = new Observable<AppEvent>(
    (subscriber) => {
      let source: EventSourceLike | null = null;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let failures = 0;

      const connect = (): void => {
        this.setState('connecting');
        const current = this.createSource(EVENTS_URL);
        source = current;
        current.onopen = () => {
          failures = 0;
          this.setState('open');
        };
        current.onerror = () => {
          this.setState('connecting');
          if (current.readyState !== CLOSED) return;
          current.close();
          const delay =
            RECONNECT_DELAYS_MS[
              Math.min(failures++, RECONNECT_DELAYS_MS.length - 1)
            ];
          timer = setTimeout(connect, delay);
        };
        for (const name of APP_EVENT_NAMES) {
          current.addEventListener(name, (message) => {
            const data = parseData(message.data);
            if (data) subscriber.next({ name, data } as AppEvent);
          });
        }
      };

      connect();
      this.connectNow = () => {
        if (this.connection() === 'open') return;
        clearTimeout(timer);
        source?.close();
        connect();
      };
      return () => {
        this.connectNow = null;
        clearTimeout(timer);
        source?.close();
        this.setState('closed');
      };
    },
  ).pipe(share());

  private setState(state: EventStreamState): void {
    if (this.connection() === state) return;
    this.connection.set(state);
    this.transitions.next(state);
  }

  /** The server is back (a health check answered): reconnect now instead of after the backoff delay. */
  reconnect(): void {
    this.connectNow?.();
  }

  /** The payloads of one named event. */
  on<K extends AppEventName>(name: K): Observable<AppEventMap[K]> {
    return this.events$.pipe(
      filter((event) => event.name === name),
      // The name matched, so the payload is that event's (TypeScript cannot narrow a generic union).
      map((event) => event.data as AppEventMap[K]),
    );
  }
}

function parseData(raw: string): object | null {
  try {
    const data: unknown = JSON.parse(raw);
    return data !== null && typeof data === 'object' ? data : null;
  } catch {
    return null;
  }
}

import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Observable } from 'rxjs';
import {
  APP_EVENT_NAMES,
  type AppEventMap,
  type AppEventName,
} from '@metatronos/shared-types';
import { Clock } from '../clock/clock';

export interface AppEvent<K extends AppEventName = AppEventName> {
  name: K;
  payload: AppEventMap[K];
}

/** The typed face of the app's event bus: names and payloads come from the shared event map. */
@Injectable()
export class AppEventBus implements OnModuleDestroy {
  private stopped: AppEventMap['shutdown'] | null = null;

  constructor(
    private readonly emitter: EventEmitter2,
    private readonly clock: Clock,
  ) {}

  /**
   * The first thing the app does when it closes: every stream of events gets `shutdown` as its last
   * event and ends, so the SSE responses built on it end and the HTTP server can close.
   */
  onModuleDestroy(): void {
    if (this.stopped) return;
    this.stopped = { at: this.clock.now().toISOString() };
    this.emit('shutdown', this.stopped);
  }

  emit<K extends AppEventName>(name: K, payload: AppEventMap[K]): void {
    this.emitter.emit(name, payload);
  }

  /** Listens to one event; the returned function stops listening. */
  on<K extends AppEventName>(
    name: K,
    listener: (payload: AppEventMap[K]) => void,
  ): () => void {
    this.emitter.on(name, listener);
    return () => {
      this.emitter.off(name, listener);
    };
  }

  /** Emits and resolves once every listener has finished (for a listener whose work the emitter's caller must see done). */
  async emitAndWait<K extends AppEventName>(
    name: K,
    payload: AppEventMap[K],
  ): Promise<void> {
    await this.emitter.emitAsync(name, payload);
  }

  /**
   * Every app event, as it happens, until the subscriber unsubscribes or the app stops: then `shutdown`
   * is the last event and the stream completes (at once for a stream opened while the app stops).
   */
  stream(): Observable<AppEvent> {
    return new Observable<AppEvent>((subscriber) => {
      if (this.stopped) {
        subscriber.next({ name: 'shutdown', payload: this.stopped });
        subscriber.complete();
        return;
      }
      const listeners = APP_EVENT_NAMES.map((name) => {
        const listener = (payload: AppEventMap[typeof name]) => {
          subscriber.next({ name, payload });
          if (name === 'shutdown') subscriber.complete();
        };
        this.emitter.on(name, listener);
        return { name, listener };
      });
      return () =>
        listeners.forEach(({ name, listener }) =>
          this.emitter.off(name, listener),
        );
    });
  }
}

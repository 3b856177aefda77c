import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Observable } from 'rxjs';
import {
  APP_EVENT_NAMES,
  type AppEventMap,
  type AppEventName,
} from '@metatronos/shared-types';

export interface AppEvent<K extends AppEventName = AppEventName> {
  name: K;
  payload: AppEventMap[K];
}

/** The typed face of the app's event bus: names and payloads come from the shared event map. */
@Injectable()
export class AppEventBus {
  constructor(private readonly emitter: EventEmitter2) {}

  emit<K extends AppEventName>(name: K, payload: AppEventMap[K]): void {
    this.emitter.emit(name, payload);
  }

  /** Emits and resolves once every listener has finished (for a listener whose work the emitter's caller must see done). */
  async emitAndWait<K extends AppEventName>(
    name: K,
    payload: AppEventMap[K],
  ): Promise<void> {
    await this.emitter.emitAsync(name, payload);
  }

  /** Every app event, as it happens, until the subscriber unsubscribes. */
  stream(): Observable<AppEvent> {
    return new Observable<AppEvent>((subscriber) => {
      const listeners = APP_EVENT_NAMES.map((name) => {
        const listener = (payload: AppEventMap[typeof name]) =>
          subscriber.next({ name, payload });
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

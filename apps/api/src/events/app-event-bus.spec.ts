import { EventEmitter2 } from '@nestjs/event-emitter';
import type { AppEventName } from '@metatronos/shared-types';
import { ManualClock } from '../clock/clock';
import { AppEventBus, type AppEvent } from './app-event-bus';

describe('AppEventBus', () => {
  const at = '2026-03-01T10:00:00.000Z';
  const setup = () => {
    const emitter = new EventEmitter2();
    const bus = new AppEventBus(emitter, new ManualClock(new Date(at)));
    return { emitter, bus };
  };
  const record = (bus: AppEventBus) => {
    const seen: AppEvent[] = [];
    let completed = false;
    const subscription = bus.stream().subscribe({
      next: (event) => seen.push(event),
      complete: () => (completed = true),
    });
    return {
      names: (): AppEventName[] => seen.map((event) => event.name),
      seen,
      completed: () => completed,
      subscription,
    };
  };

  it('streams events until the app closes, then ends every stream with "shutdown"', () => {
    const { emitter, bus } = setup();
    const first = record(bus);
    const second = record(bus);
    bus.emit('settings.updated', { updatedAt: at });
    bus.onModuleDestroy();
    bus.emit('settings.updated', { updatedAt: at });

    for (const stream of [first, second]) {
      expect(stream.names()).toEqual(['settings.updated', 'shutdown']);
      expect(stream.seen[1].payload).toEqual({ at });
      expect(stream.completed()).toBe(true);
    }
    // Completed streams leave no listener behind.
    expect(emitter.listenerCount('settings.updated')).toBe(0);
  });

  it('ends a stream opened while the app stops at once, with "shutdown"', () => {
    const { bus } = setup();
    bus.onModuleDestroy();
    bus.onModuleDestroy();
    const late = record(bus);
    expect(late.names()).toEqual(['shutdown']);
    expect(late.completed()).toBe(true);
  });

  it('stops delivering to a stream that unsubscribed', () => {
    const { emitter, bus } = setup();
    const stream = record(bus);
    stream.subscription.unsubscribe();
    bus.emit('settings.updated', { updatedAt: at });
    expect(stream.names()).toEqual([]);
    expect(emitter.listenerCount('shutdown')).toBe(0);
  });
});

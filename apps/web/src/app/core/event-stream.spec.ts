import { TestBed } from '@angular/core/testing';
import type { AppEventMap } from '@metatronos/shared-types';
import { EVENT_SOURCE_FACTORY, EventStream, type EventSourceLike } from './event-stream';

class FakeEventSource implements EventSourceLike {
  static instances: FakeEventSource[] = [];
  readyState = 0;
  onopen: ((event: Event) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  closed = false;
  private readonly listeners = new Map<string, ((event: MessageEvent<string>) => void)[]>();

  constructor(readonly url: string) {
    FakeEventSource.instances.push(this);
  }

  addEventListener(type: string, listener: (event: MessageEvent<string>) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  close(): void {
    this.closed = true;
    this.readyState = 2;
  }

  open(): void {
    this.readyState = 1;
    this.onopen?.(new Event('open'));
  }

  emit(type: string, data: string): void {
    for (const listener of this.listeners.get(type) ?? []) listener(new MessageEvent(type, { data }));
  }

  fail(readyState: number): void {
    this.readyState = readyState;
    this.onerror?.(new Event('error'));
  }
}

describe('EventStream', () => {
  let stream: EventStream;

  beforeEach(() => {
    FakeEventSource.instances = [];
    TestBed.configureTestingModule({
      providers: [{ provide: EVENT_SOURCE_FACTORY, useValue: (url: string) => new FakeEventSource(url) }],
    });
    stream = TestBed.inject(EventStream);
  });

  afterEach(() => jest.useRealTimers());

  it('opens nothing until somebody subscribes', () => {
    expect(FakeEventSource.instances).toHaveLength(0);
    expect(stream.state()).toBe('closed');
  });

  it('delivers typed payloads of named events to one shared EventSource, and closes it with the last subscriber', () => {
    const statuses: AppEventMap['database.status'][] = [];
    const logouts: AppEventMap['auth.logged_out'][] = [];
    const a = stream.on('database.status').subscribe((e) => statuses.push(e));
    const b = stream.on('auth.logged_out').subscribe((e) => logouts.push(e));

    expect(FakeEventSource.instances).toHaveLength(1);
    const source = FakeEventSource.instances[0];
    expect(source.url).toBe('/api/events');
    expect(stream.state()).toBe('connecting');
    source.open();
    expect(stream.state()).toBe('open');

    source.emit('database.status', '{"status":"down","reason":"ECONNREFUSED","at":"2026-01-01T00:00:00.000Z"}');
    source.emit('auth.logged_out', '{"at":"2026-01-01T00:00:01.000Z"}');
    source.emit('database.status', 'not json');
    source.emit('heartbeat', '{"at":"x"}');

    expect(statuses).toEqual([{ status: 'down', reason: 'ECONNREFUSED', at: '2026-01-01T00:00:00.000Z' }]);
    expect(logouts).toEqual([{ at: '2026-01-01T00:00:01.000Z' }]);

    a.unsubscribe();
    expect(source.closed).toBe(false);
    b.unsubscribe();
    expect(source.closed).toBe(true);
    expect(stream.state()).toBe('closed');
  });

  it('lets the browser retry network drops, and reconnects itself after the browser gave up', () => {
    jest.useFakeTimers();
    const sub = stream.events$.subscribe();
    const first = FakeEventSource.instances[0];
    first.open();

    first.fail(0); // CONNECTING: the browser reconnects by itself
    expect(stream.state()).toBe('connecting');
    expect(first.closed).toBe(false);

    first.fail(2); // CLOSED, e.g. the server answered 401 or 503
    expect(first.closed).toBe(true);
    expect(FakeEventSource.instances).toHaveLength(1);
    jest.advanceTimersByTime(2_000);
    expect(FakeEventSource.instances).toHaveLength(2);

    sub.unsubscribe();
    expect(FakeEventSource.instances[1].closed).toBe(true);
  });

  it('cancels a pending reconnect on unsubscribe', () => {
    jest.useFakeTimers();
    const sub = stream.events$.subscribe();
    FakeEventSource.instances[0].fail(2);
    sub.unsubscribe();
    jest.advanceTimersByTime(60_000);
    expect(FakeEventSource.instances).toHaveLength(1);
  });
});

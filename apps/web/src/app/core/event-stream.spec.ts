import { TestBed } from '@angular/core/testing';
import type { AppEventMap } from '@metatronos/shared-types';
import {
  fakeEventSources,
  type FakeEventSource,
} from '../testing/fake-event-source';
import { EVENT_SOURCE_FACTORY, EventStream } from './event-stream';

describe('EventStream', () => {
  let stream: EventStream;
  let sources: FakeEventSource[];

  beforeEach(() => {
    const fake = fakeEventSources();
    sources = fake.sources;
    TestBed.configureTestingModule({
      providers: [{ provide: EVENT_SOURCE_FACTORY, useValue: fake.factory }],
    });
    stream = TestBed.inject(EventStream);
  });

  afterEach(() => jest.useRealTimers());

  it('opens nothing until somebody subscribes', () => {
    expect(sources).toHaveLength(0);
    expect(stream.state()).toBe('closed');
  });

  it('delivers typed payloads of named events to one shared EventSource, and closes it with the last subscriber', () => {
    const statuses: AppEventMap['database.status'][] = [];
    const logouts: AppEventMap['auth.logged_out'][] = [];
    const a = stream.on('database.status').subscribe((e) => statuses.push(e));
    const b = stream.on('auth.logged_out').subscribe((e) => logouts.push(e));

    expect(sources).toHaveLength(1);
    const source = sources[0];
    expect(source.url).toBe('/api/events');
    expect(stream.state()).toBe('connecting');
    source.open();
    expect(stream.state()).toBe('open');

    source.emitRaw(
      'database.status',
      '{"status":"down","reason":"ECONNREFUSED","at":"2026-01-01T00:00:00.000Z"}',
    );
    source.emitRaw('auth.logged_out', '{"at":"2026-01-01T00:00:01.000Z"}');
    source.emitRaw('database.status', 'not json');
    source.emitRaw('heartbeat', '{"at":"x"}');

    expect(statuses).toEqual([
      {
        status: 'down',
        reason: 'ECONNREFUSED',
        at: '2026-01-01T00:00:00.000Z',
      },
    ]);
    expect(logouts).toEqual([{ at: '2026-01-01T00:00:01.000Z' }]);

    a.unsubscribe();
    expect(source.closed).toBe(false);
    b.unsubscribe();
    expect(source.closed).toBe(true);
    expect(stream.state()).toBe('closed');
  });

  it('reconnects at once when told the server is back, instead of waiting for the backoff', () => {
    jest.useFakeTimers();
    const sub = stream.events$.subscribe();
    sources[0].open();
    stream.reconnect(); // open: nothing to do
    expect(sources).toHaveLength(1);

    sources[0].fail(2);
    expect(sources).toHaveLength(1);
    stream.reconnect();
    expect(sources).toHaveLength(2);
    expect(sources[0].closed).toBe(true);
    sources[1].open();
    expect(stream.state()).toBe('open');
    // The cancelled backoff timer opens nothing more.
    jest.advanceTimersByTime(60_000);
    expect(sources).toHaveLength(2);

    sub.unsubscribe();
    stream.reconnect(); // nobody listens: nothing opens
    expect(sources).toHaveLength(2);
  });

  it('lets the browser retry network drops, and reconnects itself after the browser gave up', () => {
    jest.useFakeTimers();
    const sub = stream.events$.subscribe();
    const first = sources[0];
    first.open();

    first.fail(0); // CONNECTING: the browser reconnects by itself
    expect(stream.state()).toBe('connecting');
    expect(first.closed).toBe(false);

    first.fail(2); // CLOSED, e.g. the server answered 401 or 503
    expect(first.closed).toBe(true);
    expect(sources).toHaveLength(1);
    jest.advanceTimersByTime(2_000);
    expect(sources).toHaveLength(2);

    sub.unsubscribe();
    expect(sources[1].closed).toBe(true);
  });

  it('cancels a pending reconnect on unsubscribe', () => {
    jest.useFakeTimers();
    const sub = stream.events$.subscribe();
    sources[0].fail(2);
    sub.unsubscribe();
    jest.advanceTimersByTime(60_000);
    expect(sources).toHaveLength(1);
  });
});

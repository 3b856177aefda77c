import { provideHttpClient, withInterceptors } from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import { DestroyRef } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { provideRouter } from '@angular/router';
import { FakeEventStream } from '../testing/fake-event-stream';
import { apiInterceptor } from './api.interceptor';
import { EventStream } from './event-stream';
import { UNREACHABLE_TITLE } from './server-problem';
import { ServerStatus } from './server-status';
import {
  HEALTH_TIMEOUT_MS,
  HEALTH_URL,
  SERVER_WATCH_RETRY_MS,
  ServerWatch,
} from './server-watch';

describe('ServerWatch', () => {
  let http: HttpTestingController;
  let events: FakeEventStream;
  let server: ServerStatus;
  let destroy: () => void;

  const healthy = () =>
    http.expectOne(HEALTH_URL).flush({ status: 'ok', db: 'up' });
  const unreachable = () =>
    http
      .expectOne(HEALTH_URL)
      .error(new ProgressEvent('error'), { status: 0, statusText: '' });

  beforeEach(() => {
    jest.useFakeTimers();
    events = new FakeEventStream();
    TestBed.configureTestingModule({
      providers: [
        provideHttpClient(withInterceptors([apiInterceptor])),
        provideHttpClientTesting(),
        provideRouter([]),
        { provide: EventStream, useValue: events },
        { provide: SERVER_WATCH_RETRY_MS, useValue: 2_000 },
      ],
    });
    http = TestBed.inject(HttpTestingController);
    server = TestBed.inject(ServerStatus);
    const callbacks: (() => void)[] = [];
    const destroyRef = {
      onDestroy: (callback: () => void) => {
        callbacks.push(callback);
        return () => undefined;
      },
    } as unknown as DestroyRef;
    TestBed.inject(ServerWatch).start(destroyRef);
    TestBed.tick();
    destroy = () => callbacks.forEach((callback) => callback());
  });

  afterEach(() => {
    destroy();
    http.verify();
    jest.useRealTimers();
  });

  it('asks nothing while the event stream is open', () => {
    jest.advanceTimersByTime(60_000);
    TestBed.tick();
    http.expectNone(HEALTH_URL);
    expect(server.problem()).toBeNull();
  });

  it('shows the banner as soon as the stream drops and the server does not answer, and asks again every 2 s', () => {
    events.setState('connecting');
    unreachable();
    expect(server.problem()?.title).toBe(UNREACHABLE_TITLE);
    expect(server.recovered()).toBe(0);

    jest.advanceTimersByTime(1_999);
    http.expectNone(HEALTH_URL);
    jest.advanceTimersByTime(1);
    unreachable();
    expect(server.problem()?.title).toBe(UNREACHABLE_TITLE);

    // Back: the banner goes and the stream reconnects at once…
    jest.advanceTimersByTime(2_000);
    healthy();
    expect(server.problem()).toBeNull();
    expect(events.reconnects).toBe(1);
    expect(server.recovered()).toBe(0);
    // …and once it is open, the pages reload.
    events.setState('open');
    expect(server.recovered()).toBe(1);

    // No more checks once the server is back.
    jest.advanceTimersByTime(10_000);
    http.expectNone(HEALTH_URL);
  });

  it('reloads the pages when the stream comes back after a short drop (events were missed)', () => {
    events.setState('connecting');
    // The server answers (it restarted quickly, or only the stream broke): nothing to show, but reload.
    healthy();
    expect(server.problem()).toBeNull();
    events.setState('open');
    expect(server.recovered()).toBe(1);
    jest.advanceTimersByTime(10_000);
    http.expectNone(HEALTH_URL);
  });

  it('keeps kicking the stream while the server answers but the stream stays down', () => {
    events.setState('connecting');
    healthy();
    expect(events.reconnects).toBe(1);
    jest.advanceTimersByTime(2_000);
    healthy();
    expect(events.reconnects).toBe(2);
    expect(server.recovered()).toBe(0);
    events.setState('open');
    expect(server.recovered()).toBe(1);
    jest.advanceTimersByTime(10_000);
    http.expectNone(HEALTH_URL);
  });

  it('takes the stream coming back as the server being back, even while a check hangs', () => {
    events.setState('connecting');
    const hanging = http.expectOne(HEALTH_URL);
    events.setState('open');
    expect(server.recovered()).toBe(1);
    expect(server.problem()).toBeNull();
    hanging.flush({ status: 'ok', db: 'up' });
    expect(server.recovered()).toBe(1);
  });

  it('counts a check without an answer as the server being away, and asks again', () => {
    events.setState('connecting');
    const hanging = http.expectOne(HEALTH_URL);
    jest.advanceTimersByTime(HEALTH_TIMEOUT_MS);
    expect(hanging.cancelled).toBe(true);
    expect(server.problem()?.title).toBe(UNREACHABLE_TITLE);
    jest.advanceTimersByTime(2_000);
    healthy();
    expect(server.problem()).toBeNull();
    events.setState('open');
    expect(server.recovered()).toBe(1);
  });

  it('misses no drop: a server that still answered while shutting down, then went away', () => {
    // Shutting down: the stream ends, the server still answers the check and the stream reopens…
    events.setState('connecting');
    healthy();
    events.setState('open');
    // …then the process is gone, all within one rendering frame.
    events.setState('connecting');
    unreachable();
    expect(server.problem()?.title).toBe(UNREACHABLE_TITLE);
    // The browser's own retries of the stream keep failing: the watch keeps asking.
    jest.advanceTimersByTime(2_000);
    unreachable();
    expect(server.problem()?.title).toBe(UNREACHABLE_TITLE);
  });

  it('keeps asking when the server answered while shutting down but the stream never came back', () => {
    events.setState('connecting');
    healthy(); // still shutting down
    jest.advanceTimersByTime(2_000);
    unreachable(); // gone
    expect(server.problem()?.title).toBe(UNREACHABLE_TITLE);
    jest.advanceTimersByTime(2_000);
    healthy(); // restarted
    events.setState('open');
    expect(server.problem()).toBeNull();
    expect(server.recovered()).toBe(1);
  });

  it('asks when the browser goes offline', () => {
    window.dispatchEvent(new Event('offline'));
    unreachable();
    expect(server.problem()?.title).toBe(UNREACHABLE_TITLE);
    jest.advanceTimersByTime(2_000);
    healthy();
    expect(server.problem()).toBeNull();
    expect(server.recovered()).toBe(1);
  });

  it('stops asking once the shell is gone', () => {
    events.setState('connecting');
    unreachable();
    destroy();
    destroy = () => undefined;
    jest.advanceTimersByTime(10_000);
    http.expectNone(HEALTH_URL);
  });
});

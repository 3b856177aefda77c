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
import { HEALTH_URL, SERVER_WATCH_RETRY_MS, ServerWatch } from './server-watch';

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
    events.state.set('connecting');
    TestBed.tick();
    unreachable();
    expect(server.problem()?.title).toBe(UNREACHABLE_TITLE);
    expect(server.recovered()).toBe(0);

    jest.advanceTimersByTime(1_999);
    http.expectNone(HEALTH_URL);
    jest.advanceTimersByTime(1);
    unreachable();
    expect(server.problem()?.title).toBe(UNREACHABLE_TITLE);

    // Back: the banner goes, the stream reconnects at once, the pages reload.
    jest.advanceTimersByTime(2_000);
    healthy();
    expect(server.problem()).toBeNull();
    expect(server.recovered()).toBe(1);
    expect(events.reconnects).toBe(1);

    // No more checks once the server is back.
    jest.advanceTimersByTime(10_000);
    http.expectNone(HEALTH_URL);
  });

  it('reloads the pages when the stream comes back after a short drop (events were missed)', () => {
    events.state.set('connecting');
    TestBed.tick();
    // The server answers (it restarted quickly, or only the stream broke): nothing to show, but reload.
    healthy();
    expect(server.problem()).toBeNull();
    expect(server.recovered()).toBe(1);
    events.state.set('open');
    TestBed.tick();
    http.expectNone(HEALTH_URL);
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
    events.state.set('connecting');
    TestBed.tick();
    unreachable();
    destroy();
    destroy = () => undefined;
    jest.advanceTimersByTime(10_000);
    http.expectNone(HEALTH_URL);
  });
});

import { Clipboard } from '@angular/cdk/clipboard';
import { provideHttpClient } from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import { signal } from '@angular/core';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import { provideRouter } from '@angular/router';
import { Subject, filter, map } from 'rxjs';
import type {
  AppEventMap,
  AppEventName,
  SystemInfo,
} from '@metatronos/shared-types';
import {
  type AppEvent,
  EventStream,
  type EventStreamState,
} from '../core/event-stream';
import { ServerStatus } from '../core/server-status';
import { SystemPage } from './system-page';

/** Stands in for the SSE connection: the test pushes events by hand. */
class FakeEventStream {
  readonly state = signal<EventStreamState>('open');
  private readonly events = new Subject<AppEvent>();

  on<K extends AppEventName>(name: K) {
    return this.events.pipe(
      filter((event) => event.name === name),
      map((event) => event.data as AppEventMap[K]),
    );
  }

  emit(event: AppEvent): void {
    this.events.next(event);
  }

  get observed(): boolean {
    return this.events.observed;
  }
}

const INFO: SystemInfo = {
  version: '1.4.2',
  uptimeSeconds: 3 * 3600 + 12 * 60 + 5,
  database: { kind: 'embedded', status: 'up' },
  dataDir: '/var/lib/metatronos',
};

describe('SystemPage', () => {
  let fixture: ComponentFixture<SystemPage>;
  let http: HttpTestingController;
  let events: FakeEventStream;
  let clipboard: { copy: jest.Mock<boolean, [string]> };

  const el = (testId: string) =>
    fixture.nativeElement.querySelector(
      `[data-testid="${testId}"]`,
    ) as HTMLElement | null;
  const text = (testId: string) => el(testId)?.textContent?.trim();

  beforeEach(() => {
    events = new FakeEventStream();
    clipboard = { copy: jest.fn<boolean, [string]>(() => true) };
    TestBed.configureTestingModule({
      imports: [SystemPage],
      providers: [
        provideHttpClient(),
        provideHttpClientTesting(),
        provideRouter([]),
        { provide: EventStream, useValue: events },
        { provide: Clipboard, useValue: clipboard },
      ],
    });
    http = TestBed.inject(HttpTestingController);
  });

  afterEach(() => {
    http.verify();
    jest.useRealTimers();
  });

  async function load(info: SystemInfo = INFO): Promise<void> {
    fixture = TestBed.createComponent(SystemPage);
    await fixture.whenStable();
    http.expectOne('/api/system').flush(info);
    await fixture.whenStable();
  }

  it('shows a progress bar while loading', async () => {
    fixture = TestBed.createComponent(SystemPage);
    await fixture.whenStable();
    expect(
      fixture.nativeElement.querySelector('mat-progress-bar'),
    ).not.toBeNull();
    expect(el('system-version')).toBeNull();
    http.expectOne('/api/system').flush(INFO);
    await fixture.whenStable();
    expect(fixture.nativeElement.querySelector('mat-progress-bar')).toBeNull();
  });

  it('renders the fetched values', async () => {
    await load();
    expect(text('system-version')).toBe('1.4.2');
    expect(text('system-uptime')).toBe('3 h 12 min');
    expect(text('system-db-kind')).toBe('Embedded (FerretDB)');
    expect(text('system-db-status')).toBe('Up');
    expect(text('system-data-dir')).toBe('/var/lib/metatronos');
  });

  it('names an external database', async () => {
    await load({ ...INFO, database: { kind: 'external', status: 'down' } });
    expect(text('system-db-kind')).toBe('External MongoDB');
    expect(text('system-db-status')).toBe('Down');
  });

  it('flips the database status on database.status events', async () => {
    await load();
    expect(events.observed).toBe(true);

    events.emit({
      name: 'database.status',
      data: {
        status: 'down',
        reason: 'connection refused',
        at: '2026-01-01T00:00:00Z',
      },
    });
    await fixture.whenStable();
    expect(text('system-db-status')).toBe('Down');
    expect(el('system-db-status')?.getAttribute('data-status')).toBe('down');
    expect(fixture.nativeElement.textContent).toContain('connection refused');

    events.emit({
      name: 'database.status',
      data: { status: 'up', at: '2026-01-01T00:00:05Z' },
    });
    await fixture.whenStable();
    expect(text('system-db-status')).toBe('Up');
  });

  it('stops listening to events when destroyed', async () => {
    await load();
    fixture.destroy();
    expect(events.observed).toBe(false);
  });

  it('ticks the uptime every second from the last fetched value', () => {
    jest.useFakeTimers();
    fixture = TestBed.createComponent(SystemPage);
    fixture.detectChanges();
    http.expectOne('/api/system').flush({ ...INFO, uptimeSeconds: 58 });
    fixture.detectChanges();
    expect(text('system-uptime')).toBe('58 s');

    jest.advanceTimersByTime(1_000);
    fixture.detectChanges();
    expect(text('system-uptime')).toBe('59 s');

    jest.advanceTimersByTime(3_000);
    fixture.detectChanges();
    expect(text('system-uptime')).toBe('1 min 2 s');
    fixture.destroy();
  });

  it('fetches again on Refresh', async () => {
    await load();
    el('system-refresh')?.click();
    await fixture.whenStable();
    http.expectOne('/api/system').flush({ ...INFO, version: '1.5.0' });
    await fixture.whenStable();
    expect(text('system-version')).toBe('1.5.0');
  });

  it('shows an error with a way to try again', async () => {
    fixture = TestBed.createComponent(SystemPage);
    await fixture.whenStable();
    http
      .expectOne('/api/system')
      .flush(
        { statusCode: 500, message: 'Internal server error' },
        { status: 500, statusText: 'Server Error' },
      );
    await fixture.whenStable();

    const alert = fixture.nativeElement.querySelector(
      '[role="alert"]',
    ) as HTMLElement;
    expect(alert.textContent).toContain("Couldn't load the system information");
    expect(alert.textContent).toContain('Internal server error');

    alert.querySelector('button')?.click();
    await fixture.whenStable();
    http.expectOne('/api/system').flush(INFO);
    await fixture.whenStable();
    expect(fixture.nativeElement.querySelector('[role="alert"]')).toBeNull();
    expect(text('system-version')).toBe('1.4.2');
  });

  it('copies the data directory to the clipboard', async () => {
    await load();
    el('system-copy-data-dir')?.click();
    await fixture.whenStable();
    expect(clipboard.copy).toHaveBeenCalledWith('/var/lib/metatronos');
    expect(fixture.nativeElement.textContent).toContain(
      'Path copied to the clipboard.',
    );
  });

  it('reloads when the server is back after an outage', async () => {
    await load();
    const server = TestBed.inject(ServerStatus);
    server.report({ kind: 'unreachable', status: 0, title: 't', message: 'm' });
    server.retry();
    http
      .expectOne('/api/auth/status')
      .flush({ ownerExists: true, authenticated: true });
    await fixture.whenStable();
    http.expectOne('/api/system').flush(INFO);
  });
});

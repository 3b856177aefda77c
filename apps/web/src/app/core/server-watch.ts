import { DOCUMENT } from '@angular/common';
import { HttpClient } from '@angular/common/http';
import {
  DestroyRef,
  Injectable,
  InjectionToken,
  Injector,
  effect,
  inject,
} from '@angular/core';
import type { HealthResponse } from '@metatronos/shared-types';
import { API_BASE } from './api-client';
import { EventStream } from './event-stream';
import { ServerStatus } from './server-status';

export const HEALTH_URL = `${API_BASE}/health`;

/** How often the server is asked again while it is away. */
export const SERVER_WATCH_RETRY_MS = new InjectionToken<number>(
  'SERVER_WATCH_RETRY_MS',
  { providedIn: 'root', factory: () => 2_000 },
);

/**
 * Notices a server that went away while the console sits idle, and the moment it is back.
 *
 * The live event stream drops as soon as the server process stops; the watch then asks `GET /api/health`
 * at once. A failed ask is reported by the HTTP interceptor (the "Can't reach the server" banner) and
 * repeated every {@link SERVER_WATCH_RETRY_MS} until the server answers. Then the banner goes, the event
 * stream reconnects without waiting for its backoff, and {@link ServerStatus.recovered} tells every page to
 * reload what it shows (events sent during the outage were missed).
 *
 * The browser going offline, or the tab becoming visible again, asks too.
 */
@Injectable({ providedIn: 'root' })
export class ServerWatch {
  private readonly http = inject(HttpClient);
  private readonly events = inject(EventStream);
  private readonly server = inject(ServerStatus);
  private readonly retryMs = inject(SERVER_WATCH_RETRY_MS);
  private readonly document = inject(DOCUMENT);
  private readonly injector = inject(Injector);

  private started = false;
  /** The stream dropped or a check failed, and no check has succeeded since. */
  private away = false;
  private checking = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastState = this.events.state();

  /** Starts watching (once; the logged-in shell calls it). Stops when `destroyRef` is destroyed. */
  start(destroyRef: DestroyRef): void {
    if (this.started) return;
    this.started = true;

    const watcher = effect(
      () => {
        const state = this.events.state();
        const previous = this.lastState;
        this.lastState = state;
        if (previous === 'open' && state !== 'open') {
          this.away = true;
          this.check();
        } else if (state === 'open' && this.away) {
          this.check();
        }
      },
      { injector: this.injector, manualCleanup: true },
    );

    const window = this.document.defaultView;
    const onOffline = () => {
      this.away = true;
      this.check();
    };
    const onVisible = () => {
      if (this.document.visibilityState === 'visible') this.check();
    };
    window?.addEventListener('offline', onOffline);
    window?.addEventListener('online', onVisible);
    this.document.addEventListener('visibilitychange', onVisible);

    destroyRef.onDestroy(() => {
      watcher.destroy();
      clearTimeout(this.timer);
      window?.removeEventListener('offline', onOffline);
      window?.removeEventListener('online', onVisible);
      this.document.removeEventListener('visibilitychange', onVisible);
      this.started = false;
      this.away = false;
    });
  }

  /** Asks the server now (one request at a time). */
  check(): void {
    if (this.checking || !this.started) return;
    clearTimeout(this.timer);
    this.checking = true;
    this.http.get<HealthResponse>(HEALTH_URL).subscribe({
      next: () => {
        this.checking = false;
        if (!this.away) return;
        this.away = false;
        this.events.reconnect();
        this.server.recover();
      },
      error: () => {
        // The interceptor reported it (banner); ask again until the server answers.
        this.checking = false;
        this.away = true;
        if (this.started)
          this.timer = setTimeout(() => this.check(), this.retryMs);
      },
    });
  }
}

import { DOCUMENT } from '@angular/common';
import { HttpClient, HttpErrorResponse } from '@angular/common/http';
import { DestroyRef, Injectable, InjectionToken, inject } from '@angular/core';
import { TimeoutError, timeout } from 'rxjs';
import type { HealthResponse } from '@metatronos/shared-types';
import { API_BASE } from './api-client';
import { EventStream } from './event-stream';
import { connectivityProblemFrom } from './server-problem';
import { ServerStatus } from './server-status';

export const HEALTH_URL = `${API_BASE}/health`;
/** A health check without an answer after this long counts as "the server is away". */
export const HEALTH_TIMEOUT_MS = 4_000;

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
 * repeated every {@link SERVER_WATCH_RETRY_MS}. Once the server answers, the banner goes and the event stream
 * reconnects without waiting for its backoff; once the stream is open again (the proof that the server is
 * back for good: it may still answer while shutting down), {@link ServerStatus.recovered} tells every page
 * to reload what it shows (events sent during the outage were missed).
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

  private started = false;
  /** The stream dropped or a check failed, and no check has succeeded since. */
  private away = false;
  private checking = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** Starts watching (once; the logged-in shell calls it). Stops when `destroyRef` is destroyed. */
  start(destroyRef: DestroyRef): void {
    if (this.started) return;
    this.started = true;

    let previous = this.events.state();
    const watcher = this.events.stateChanges$.subscribe((state) => {
      if (previous === 'open' && state !== 'open') {
        this.away = true;
        this.check();
      } else if (state === 'open' && this.away) {
        // The stream is back: the server answers, whatever a check still under way says.
        this.back();
      }
      previous = state;
    });

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
      watcher.unsubscribe();
      clearTimeout(this.timer);
      window?.removeEventListener('offline', onOffline);
      window?.removeEventListener('online', onVisible);
      this.document.removeEventListener('visibilitychange', onVisible);
      this.started = false;
      this.away = false;
    });
  }

  /** The server answers again after an outage: clear the banner, reconnect the stream, reload the pages. */
  private back(): void {
    if (!this.away) return;
    this.away = false;
    clearTimeout(this.timer);
    this.server.recover();
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.started) this.timer = setTimeout(() => this.check(), this.retryMs);
  }

  /** Asks the server now (one request at a time). */
  check(): void {
    if (this.checking || !this.started) return;
    clearTimeout(this.timer);
    this.checking = true;
    this.http
      .get<HealthResponse>(HEALTH_URL)
      // A server half gone (a proxy, a closing socket) may never answer: that counts as a failure.
      .pipe(timeout(HEALTH_TIMEOUT_MS))
      .subscribe({
        next: () => {
          this.checking = false;
          if (this.events.state() === 'open') {
            this.back();
            return;
          }
          // The server answers but the stream is not back yet (or it answered while shutting down): kick
          // the stream, and keep asking until it is open (then `back()` runs).
          this.events.reconnect();
          this.schedule();
        },
        error: (error: unknown) => {
          // The interceptor reported HTTP failures (banner); a timeout is reported here.
          const unanswered =
            error instanceof TimeoutError
              ? connectivityProblemFrom(new HttpErrorResponse({ status: 0 }))
              : null;
          if (unanswered) this.server.report(unanswered);
          this.checking = false;
          this.away = true;
          this.schedule();
        },
      });
  }
}

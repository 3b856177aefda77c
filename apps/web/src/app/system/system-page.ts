import { Clipboard } from '@angular/cdk/clipboard';
import {
  ChangeDetectionStrategy,
  Component,
  DestroyRef,
  computed,
  inject,
  signal,
} from '@angular/core';
import { takeUntilDestroyed, toObservable } from '@angular/core/rxjs-interop';
import { MatButton, MatIconButton } from '@angular/material/button';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatProgressBar } from '@angular/material/progress-bar';
import {
  EMPTY,
  Subject,
  catchError,
  finalize,
  interval,
  skip,
  switchMap,
  tap,
} from 'rxjs';
import type {
  DatabaseKind,
  DatabaseStatus,
  SystemInfo,
} from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { EventStream } from '../core/event-stream';
import {
  connectivityProblemFrom,
  inlineErrorMessage,
} from '../core/server-problem';
import { ServerStatus } from '../core/server-status';
import { Icon } from '../ui/icon';
import { formatUptime } from './format-uptime';
import { OwnerTimePipe } from '../core/owner-time';

export const DATABASE_KIND_LABELS: Record<DatabaseKind, string> = {
  embedded: 'Embedded (FerretDB)',
  external: 'External MongoDB',
};

const COPIED_FEEDBACK_MS = 2_000;

/** `/system`: version, uptime, database and data directory of the server, with live database status. */
@Component({
  selector: 'mt-system-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    OwnerTimePipe,
    MatButton,
    MatIconButton,
    MatCard,
    MatCardContent,
    MatProgressBar,
    Icon,
  ],
  templateUrl: './system-page.html',
  styleUrl: './system-page.scss',
})
export class SystemPage {
  private readonly api = inject(ApiClient);
  private readonly events = inject(EventStream);
  private readonly clipboard = inject(Clipboard);
  private readonly reload$ = new Subject<void>();
  private copiedTimer: ReturnType<typeof setTimeout> | undefined;

  protected readonly info = signal<SystemInfo | null>(null);
  protected readonly loading = signal(false);
  protected readonly error = signal<string | null>(null);
  /** Latest database status: from the last fetch, or newer from a `database.status` event. */
  protected readonly dbStatus = signal<DatabaseStatus | null>(null);
  protected readonly dbReason = signal<string | null>(null);
  protected readonly copied = signal<'ok' | 'failed' | null>(null);
  protected readonly live = computed(() => this.events.state() === 'open');

  /** Client clock when the info arrived, and now; uptime ticks between fetches without asking the server. */
  private readonly fetchedAt = signal(0);
  private readonly now = signal(Date.now());

  protected readonly uptimeSeconds = computed(() => {
    const info = this.info();
    if (!info) return 0;
    return (
      info.uptimeSeconds +
      Math.max(0, Math.floor((this.now() - this.fetchedAt()) / 1000))
    );
  });
  protected readonly uptime = computed(() =>
    formatUptime(this.uptimeSeconds()),
  );
  protected readonly startedAt = computed(() => {
    const info = this.info();
    return info ? new Date(this.fetchedAt() - info.uptimeSeconds * 1000) : null;
  });
  protected readonly dbKind = computed(() => {
    const info = this.info();
    return info ? DATABASE_KIND_LABELS[info.database.kind] : '';
  });

  constructor() {
    this.reload$
      .pipe(
        switchMap(() => {
          this.loading.set(true);
          this.error.set(null);
          return this.api.systemInfo().pipe(
            tap((info) => this.apply(info)),
            catchError((error: unknown) => {
              // Outages are explained by the app-wide banner; repeat them here only if there is nothing else to show.
              if (!this.info() || !connectivityProblemFrom(error)) {
                this.error.set(
                  inlineErrorMessage(
                    error,
                    'Could not load the system information.',
                  ),
                );
              }
              return EMPTY;
            }),
            finalize(() => this.loading.set(false)),
          );
        }),
        takeUntilDestroyed(),
      )
      .subscribe();

    interval(1000)
      .pipe(takeUntilDestroyed())
      .subscribe(() => this.now.set(Date.now()));

    this.events
      .on('database.status')
      .pipe(takeUntilDestroyed())
      .subscribe((event) => {
        this.dbStatus.set(event.status);
        this.dbReason.set(event.reason ?? null);
      });

    // The server came back after an outage banner's Retry: show fresh values.
    toObservable(inject(ServerStatus).recovered)
      .pipe(skip(1), takeUntilDestroyed())
      .subscribe(() => this.refresh());

    inject(DestroyRef).onDestroy(() => clearTimeout(this.copiedTimer));
    this.refresh();
  }

  protected refresh(): void {
    this.reload$.next();
  }

  protected copyDataDir(path: string): void {
    this.copied.set(this.clipboard.copy(path) ? 'ok' : 'failed');
    clearTimeout(this.copiedTimer);
    this.copiedTimer = setTimeout(
      () => this.copied.set(null),
      COPIED_FEEDBACK_MS,
    );
  }

  private apply(info: SystemInfo): void {
    const now = Date.now();
    this.now.set(now);
    this.fetchedAt.set(now);
    this.info.set(info);
    this.dbStatus.set(info.database.status);
    this.dbReason.set(null);
  }
}

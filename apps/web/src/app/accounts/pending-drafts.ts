import {
  DestroyRef,
  Injectable,
  computed,
  inject,
  signal,
} from '@angular/core';
import { takeUntilDestroyed, toObservable } from '@angular/core/rxjs-interop';
import { type Observable, catchError, filter, forkJoin, map, of } from 'rxjs';
import type { EmailDraftView } from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { EventStream } from '../core/event-stream';
import { ServerStatus } from '../core/server-status';

/**
 * The drafts waiting for the owner: pending ones and those whose send failed (they can be retried).
 * Failed drafts are asked for separately; a server that does not list them yields pending ones only.
 */
export function loadWaitingDrafts(
  api: ApiClient,
): Observable<EmailDraftView[]> {
  return forkJoin([
    api.pendingDrafts(),
    api.failedDrafts().pipe(catchError(() => of<EmailDraftView[]>([]))),
  ]).pipe(
    map(([pending, failed]) => {
      const ids = new Set(pending.map((draft) => draft.id));
      // A server that ignores the filter must not bring back sent drafts.
      return [
        ...pending.filter((draft) => draft.status !== 'sent'),
        ...failed.filter(
          (draft) => draft.status === 'failed' && !ids.has(draft.id),
        ),
      ];
    }),
  );
}

/** How many drafts wait for the owner, for the badge on the Accounts navigation entry. */
@Injectable({ providedIn: 'root' })
export class PendingDrafts {
  private readonly api = inject(ApiClient);
  private readonly events = inject(EventStream);
  private readonly destroyRef = inject(DestroyRef);
  private readonly server = inject(ServerStatus);
  /** Counts the server's returns after an outage: drafts may have come meanwhile. */
  private readonly recovered$ = toObservable(this.server.recovered);
  private readonly drafts = signal<readonly EmailDraftView[]>([]);
  private following = false;

  readonly count = computed(() => this.drafts().length);

  /** Starts loading (once) and following `drafts.changed`. */
  follow(): void {
    if (this.following) return;
    this.following = true;
    this.events
      .on('drafts.changed')
      .pipe(takeUntilDestroyed(this.destroyRef))
      .subscribe(() => this.load());
    const seen = this.server.recovered();
    this.recovered$
      .pipe(
        filter((recoveries) => recoveries > seen),
        takeUntilDestroyed(this.destroyRef),
      )
      .subscribe(() => this.load());
    this.load();
  }

  /** A fresher list (e.g. the drafts card's own load, or a draft sent or discarded there). */
  set(drafts: readonly EmailDraftView[]): void {
    this.drafts.set(drafts);
  }

  private load(): void {
    loadWaitingDrafts(this.api).subscribe({
      next: (drafts) => this.drafts.set(drafts),
      error: () => undefined,
    });
  }
}

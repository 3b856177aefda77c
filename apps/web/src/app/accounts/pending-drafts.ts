import { Injectable, inject } from '@angular/core';
import { type Observable, catchError, forkJoin, map, of } from 'rxjs';
import type { EmailDraftView } from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { WaitingItems } from '../core/waiting-items';

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
export class PendingDrafts extends WaitingItems<EmailDraftView> {
  private readonly api = inject(ApiClient);
  protected readonly event = 'drafts.changed';

  protected fetch(): Observable<EmailDraftView[]> {
    return loadWaitingDrafts(this.api);
  }
}

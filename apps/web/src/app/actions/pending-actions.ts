import { Injectable, inject } from '@angular/core';
import type { Observable } from 'rxjs';
import type { PendingActionView } from '@metatronos/shared-types';
import { WaitingItems } from '../core/waiting-items';
import { ActionsApi } from './actions-api';

/** The tool calls waiting for the owner's approval, for the badge on the Pending actions navigation entry. */
@Injectable({ providedIn: 'root' })
export class PendingActions extends WaitingItems<PendingActionView> {
  private readonly api = inject(ActionsApi);
  protected readonly event = 'actions.changed';

  protected fetch(): Observable<PendingActionView[]> {
    return this.api.pending();
  }
}

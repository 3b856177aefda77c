import { Injectable, computed, inject, signal } from '@angular/core';
import type { Observable } from 'rxjs';
import type { PendingActionView } from '@metatronos/shared-types';
import { WaitingItems } from '../core/waiting-items';
import { ActionsApi } from './actions-api';

/** How an action ended in this console: ran (done or failed) or discarded. */
export interface ActionOutcome {
  status: 'done' | 'failed' | 'discarded';
  result: unknown;
  error: string | null;
}

export interface ActionSettled {
  action: PendingActionView;
  outcome: ActionOutcome;
}

/**
 * The tool calls waiting for the owner's approval (the badge on Pending actions, the page, and each
 * chat's inline actions), and those approved or discarded in this console since it opened, with what
 * happened, so the page and the chat both show the result.
 */
@Injectable({ providedIn: 'root' })
export class PendingActions extends WaitingItems<PendingActionView> {
  private readonly api = inject(ActionsApi);
  protected readonly event = 'actions.changed';
  private readonly recent = signal<readonly ActionSettled[]>([]);
  private readonly settledIds = computed(
    () => new Set(this.recent().map((item) => item.action.id)),
  );

  /** Newest first. */
  readonly settled = this.recent.asReadonly();

  protected fetch(): Observable<PendingActionView[]> {
    return this.api.pending();
  }

  /** One settled here and still listed by a load that raced the approve stays out. */
  override set(actions: readonly PendingActionView[]): void {
    const gone = this.settledIds();
    super.set(actions.filter((action) => !gone.has(action.id)));
  }

  /** The server's answer to an edit. */
  replace(action: PendingActionView): void {
    this.set(
      this.list().map((item) => (item.id === action.id ? action : item)),
    );
  }

  settle(settled: ActionSettled): void {
    this.recent.update((list) => [
      settled,
      ...list.filter((item) => item.action.id !== settled.action.id),
    ]);
    this.set(this.list());
  }
}

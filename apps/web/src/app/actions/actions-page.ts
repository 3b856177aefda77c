import {
  ChangeDetectionStrategy,
  Component,
  computed,
  inject,
  signal,
} from '@angular/core';
import { MatProgressBar } from '@angular/material/progress-bar';
import { catchError, of } from 'rxjs';
import type { PendingActionView } from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { liveResource } from '../core/live-resource';
import { ServerError } from '../ui/server-error';
import { ActionItem } from './action-item';
import { ActionsApi } from './actions-api';
import { type ActionSettled, PendingActions } from './pending-actions';

/**
 * `/actions`: every tool call that waits for the owner, whatever proposed it (a chat, a job, Pulse, an
 * auto-reply), with Approve / Edit / Discard; what was approved here stays in view with its result.
 */
@Component({
  selector: 'mt-actions-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatProgressBar, ServerError, ActionItem],
  template: `
    <header class="header">
      <div>
        <h1 class="title">Pending actions</h1>
        <p class="subtitle">
          Metatron asks before it sends, deletes or changes something when
          nobody watched the turn, when the turn read something a third party
          wrote (a web page, an email, a contact's message), or when you asked
          it to always confirm. Nothing happens until you approve; each action
          expires after 24 hours.
        </p>
      </div>
    </header>

    <div class="progress" aria-live="polite">
      @if (loading()) {
        <mat-progress-bar
          mode="indeterminate"
          aria-label="Loading the pending actions"
        />
      }
    </div>

    @if (loadProblem(); as problem) {
      <mt-server-error
        [problem]="problem"
        [retrying]="loading()"
        (retry)="reload()"
      />
    }

    @if (settled().length) {
      <section aria-labelledby="settled-heading" class="section">
        <h2 id="settled-heading" class="section-title">Just now</h2>
        <ul class="list" data-testid="settled-actions">
          @for (item of settled(); track item.action.id) {
            <li>
              <mt-action-item
                [action]="item.action"
                [outcome]="item.outcome"
                [jobNames]="jobNames()"
              />
            </li>
          }
        </ul>
      </section>
    }

    <section aria-labelledby="pending-heading" class="section">
      <h2 id="pending-heading" class="section-title">
        Waiting for you ({{ actions().length }})
      </h2>
      @if (actions().length) {
        <ul class="list" data-testid="pending-actions">
          @for (action of actions(); track action.id) {
            <li>
              <mt-action-item
                [action]="action"
                [jobNames]="jobNames()"
                (changed)="changed($event)"
                (settled)="settle($event)"
              />
            </li>
          }
        </ul>
      } @else if (loaded()) {
        <p class="empty" data-testid="no-pending-actions">
          Nothing waits for your approval.
        </p>
      }
    </section>
  `,
  styles: `
    @use '../ui/page';

    @include page.frame;
    @include page.sections;

    .section {
      margin-bottom: 24px;
    }

    .list {
      display: grid;
      gap: 12px;
      max-width: 880px;
      margin: 0;
      padding: 0;
      list-style: none;
    }

    .empty {
      max-width: 880px;
      margin: 0;
      padding: 24px 16px;
      border: 1px dashed var(--mat-sys-outline-variant);
      border-radius: var(--mat-sys-corner-large);
      color: var(--mat-sys-on-surface-variant);
      text-align: center;
    }
  `,
})
export class ActionsPage {
  private readonly api = inject(ActionsApi);
  private readonly store = inject(PendingActions);

  protected readonly actions = this.store.list;
  protected readonly loaded = signal(false);
  /** Approved or discarded in this console (here or in a chat): kept in view with what happened. */
  protected readonly settled = this.store.settled;
  private readonly jobs = signal<readonly { id: string; name: string }[]>([]);
  protected readonly jobNames = computed(
    () => new Map(this.jobs().map((job) => [job.id, job.name])),
  );

  private readonly live = liveResource({
    load: () => this.api.pending(),
    apply: (actions) => {
      this.store.set(actions);
      this.loaded.set(true);
    },
    hasValue: this.loaded,
    failure: "Couldn't load the pending actions",
    event: { name: 'actions.changed' },
  });
  protected readonly loading = this.live.loading;
  protected readonly loadProblem = this.live.problem;
  protected readonly reload = this.live.reload;

  constructor() {
    // Job names for "Job “Morning briefing”"; without them the source says "Scheduled job".
    inject(ApiClient)
      .cronJobs()
      .pipe(catchError(() => of([])))
      .subscribe((jobs) => this.jobs.set(jobs));
  }

  protected changed(action: PendingActionView): void {
    this.store.replace(action);
  }

  protected settle(settled: ActionSettled): void {
    this.store.settle(settled);
  }
}

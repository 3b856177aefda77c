import {
  ChangeDetectionStrategy,
  Component,
  inject,
  signal,
} from '@angular/core';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatProgressBar } from '@angular/material/progress-bar';
import type { EmailDraftView } from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { liveResource } from '../core/live-resource';
import { ServerError } from '../ui/server-error';
import { DraftItem } from './draft-item';
import { PendingDrafts, loadWaitingDrafts } from './pending-drafts';

/**
 * The emails Metatron wrote in turns nobody watched (jobs, Pulse, auto-replies): nothing goes out until
 * the owner sends it here. Hidden while none waits.
 */
@Component({
  selector: 'mt-drafts-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatCard, MatCardContent, MatProgressBar, DraftItem, ServerError],
  template: `
    @if (drafts().length || loadProblem()) {
      <mat-card appearance="outlined" class="card" data-testid="drafts-card">
        <mat-card-content>
          <h2 id="drafts-heading" class="section-title">
            Emails waiting for you ({{ drafts().length }})
          </h2>
          <p class="section-help">
            Metatron wrote these on its own (a scheduled job, Pulse or an
            auto-reply). They are sent only when you press Send.
          </p>
          <div class="progress" aria-live="polite">
            @if (loading()) {
              <mat-progress-bar
                mode="indeterminate"
                aria-label="Loading the drafts"
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
          <ul
            class="drafts"
            data-testid="draft-list"
            aria-labelledby="drafts-heading"
          >
            @for (draft of drafts(); track draft.id) {
              <li>
                <mt-draft-item
                  [draft]="draft"
                  (changed)="changed($event)"
                  (done)="done($event)"
                />
              </li>
            }
          </ul>
        </mat-card-content>
      </mat-card>
    }
  `,
  styles: `
    @use '../ui/page';

    @include page.card;

    .drafts {
      display: grid;
      gap: 12px;
      margin: 0;
      padding: 0;
      list-style: none;
    }
  `,
})
export class DraftsCard {
  private readonly api = inject(ApiClient);
  private readonly store = inject(PendingDrafts);

  protected readonly drafts = signal<EmailDraftView[]>([]);
  private readonly loaded = signal(false);

  private readonly live = liveResource({
    load: () => loadWaitingDrafts(this.api),
    apply: (drafts) => this.show(drafts),
    hasValue: this.loaded,
    failure: "Couldn't load the drafts",
    event: { name: 'drafts.changed' },
  });
  protected readonly loading = this.live.loading;
  protected readonly loadProblem = this.live.problem;
  protected readonly reload = this.live.reload;

  protected changed(draft: EmailDraftView): void {
    this.show(
      this.drafts().map((item) => (item.id === draft.id ? draft : item)),
    );
  }

  protected done(draftId: string): void {
    this.show(this.drafts().filter((item) => item.id !== draftId));
  }

  private show(drafts: EmailDraftView[]): void {
    this.drafts.set(drafts);
    this.loaded.set(true);
    this.store.set(drafts);
  }
}

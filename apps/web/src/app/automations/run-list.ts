import { ChangeDetectionStrategy, Component, input } from '@angular/core';
import { RouterLink } from '@angular/router';
import type { CronRunView } from '@metatronos/shared-types';
import { Icon } from '../ui/icon';
import {
  OUTCOME_LABELS,
  TRIGGER_LABELS,
  formatDuration,
  formatInZone,
  runDetail,
} from './automation-format';

/** Runs of a job or pulses, newest first: when, what started it, how long, how it ended, and its chat. */
@Component({
  selector: 'mt-run-list',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [RouterLink, Icon],
  template: `
    @if (runs().length === 0) {
      <p class="empty" data-testid="no-runs">{{ emptyText() }}</p>
    } @else {
      <ol class="runs" [attr.aria-label]="label()">
        @for (run of runs(); track run.id) {
          <li
            class="run"
            data-testid="run-item"
            [attr.data-run-id]="run.id"
            [attr.data-outcome]="run.outcome"
          >
            <span
              class="outcome"
              data-testid="run-outcome"
              [class]="run.outcome"
              >{{ outcomes[run.outcome] }}</span
            >
            <time
              class="when"
              data-testid="run-started"
              [attr.datetime]="run.startedAt"
              >{{ format(run.startedAt, timezone()) }}</time
            >
            <span class="meta">
              <span data-testid="run-trigger">{{ triggers[run.trigger] }}</span>
              @if (run.outcome === 'running') {
                <span data-testid="run-duration">running…</span>
              } @else if (duration(run.durationMs); as took) {
                <span data-testid="run-duration">{{ took }}</span>
              }
            </span>
            @if (run.chatId) {
              <a
                class="chat-link"
                data-testid="run-chat-link"
                [routerLink]="['/chat', run.chatId]"
              >
                <mt-icon name="chat" />Open chat<span
                  class="mt-visually-hidden"
                >
                  of the run of {{ format(run.startedAt, timezone()) }}</span
                >
              </a>
            }
            @if (detail(run); as text) {
              <p
                class="detail"
                data-testid="run-detail"
                [class.error]="run.outcome === 'error'"
              >
                {{ text }}
              </p>
            }
          </li>
        }
      </ol>
    }
  `,
  styleUrl: './run-list.scss',
})
export class RunList {
  readonly runs = input.required<CronRunView[]>();
  /** The owner's time zone, for the start times. */
  readonly timezone = input.required<string>();
  readonly label = input('Runs');
  readonly emptyText = input('No runs yet.');

  protected readonly outcomes = OUTCOME_LABELS;
  protected readonly triggers = TRIGGER_LABELS;
  protected readonly format = formatInZone;
  protected readonly duration = formatDuration;
  protected readonly detail = runDetail;
}

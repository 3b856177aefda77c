import {
  ChangeDetectionStrategy,
  Component,
  computed,
  input,
  output,
} from '@angular/core';
import { MatButton } from '@angular/material/button';
import type { ServerProblem } from '../core/server-problem';
import { Icon } from './icon';

/** "Can't reach the server" / "database unavailable" with a Retry button: a full page, or a banner above a page. */
@Component({
  selector: 'mt-server-error',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButton, Icon],
  templateUrl: './server-error.html',
  styleUrl: './server-error.scss',
  host: {
    '[class.full-page]': 'fullPage()',
    '[class.banner]': '!fullPage()',
  },
})
export class ServerError {
  readonly problem = input.required<ServerProblem>();
  readonly fullPage = input(false);
  readonly retrying = input(false);
  readonly retry = output();

  protected readonly icon = computed(() =>
    this.problem().kind === 'unreachable' ? 'cloudOff' : 'error',
  );
}

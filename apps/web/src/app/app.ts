import { ChangeDetectionStrategy, Component, inject } from '@angular/core';
import { RouterOutlet } from '@angular/router';
import { ServerStatus } from './core/server-status';
import { ServerError } from './ui/server-error';

/** Root: the routed page, plus the server-problem banner or full-page error when the API cannot be reached. */
@Component({
  selector: 'mt-root',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [RouterOutlet, ServerError],
  template: `
    @if (server.problem(); as problem) {
      <mt-server-error
        [problem]="problem"
        [fullPage]="server.fullPage()"
        [retrying]="server.retrying()"
        (retry)="server.retry()"
      />
    }
    <router-outlet />
  `,
  styles: `
    :host {
      display: flex;
      flex-direction: column;
      height: 100dvh;
    }
  `,
})
export class App {
  protected readonly server = inject(ServerStatus);
}

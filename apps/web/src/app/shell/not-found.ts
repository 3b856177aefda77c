import { ChangeDetectionStrategy, Component, inject } from '@angular/core';
import { MatButton } from '@angular/material/button';
import { Router, RouterLink } from '@angular/router';

/** Any unknown URL inside the shell. */
@Component({
  selector: 'mt-not-found',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButton, RouterLink],
  template: `
    <section class="not-found" aria-labelledby="not-found-heading">
      <p class="code" aria-hidden="true">404</p>
      <h1 id="not-found-heading">Page not found</h1>
      <p>
        There is no page at <code>{{ url }}</code
        >.
      </p>
      <a mat-flat-button routerLink="/" data-testid="not-found-home"
        >Back to the console</a
      >
    </section>
  `,
  styles: `
    .not-found {
      display: flex;
      flex-direction: column;
      align-items: center;
      gap: 8px;
      padding: 64px 16px;
      text-align: center;
    }
    .code {
      margin: 0;
      font: var(--mat-sys-display-medium);
      color: var(--mat-sys-primary);
    }
    h1 {
      margin: 0;
      font: var(--mat-sys-headline-small);
    }
    p {
      margin: 0 0 16px;
      color: var(--mat-sys-on-surface-variant);
    }
    code {
      font-family: var(--mt-mono-family);
      overflow-wrap: anywhere;
    }
  `,
})
export class NotFound {
  protected readonly url = inject(Router).url;
}

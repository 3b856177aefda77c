import { ChangeDetectionStrategy, Component, input } from '@angular/core';
import { Logo } from '../ui/icon';

/** The centred card that frames the setup and login forms. */
@Component({
  selector: 'mt-auth-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [Logo],
  template: `
    <main class="page">
      <section class="card" aria-labelledby="auth-heading">
        <div class="brand"><mt-logo /><span>MetatronOS</span></div>
        <h1 id="auth-heading" class="heading">{{ heading() }}</h1>
        @if (lead()) {
          <p class="lead">{{ lead() }}</p>
        }
        <ng-content />
      </section>
      <p class="footnote">
        Self-hosted · single owner · your data stays on this server
      </p>
    </main>
  `,
  styles: `
    :host {
      display: block;
      flex: 1 1 auto;
      min-height: 0;
      overflow: auto;
      background:
        radial-gradient(
          circle at 15% 10%,
          color-mix(in srgb, var(--mat-sys-primary) 14%, transparent),
          transparent 45%
        ),
        radial-gradient(
          circle at 85% 90%,
          color-mix(in srgb, var(--mat-sys-tertiary) 12%, transparent),
          transparent 45%
        ),
        var(--mat-sys-surface-container-low);
    }
    .page {
      box-sizing: border-box;
      min-height: 100%;
      display: flex;
      flex-direction: column;
      align-items: center;
      justify-content: center;
      gap: 16px;
      padding: 32px 16px;
    }
    .card {
      box-sizing: border-box;
      width: min(100%, 440px);
      padding: 32px;
      border-radius: var(--mat-sys-corner-extra-large);
      background: var(--mat-sys-surface);
      box-shadow: var(--mat-sys-level2);
    }
    .brand {
      display: flex;
      align-items: center;
      gap: 10px;
      font: var(--mat-sys-title-medium);
      color: var(--mat-sys-primary);
      --mt-logo-size: 36px;
    }
    .heading {
      margin: 24px 0 8px;
      font: var(--mat-sys-headline-small);
      color: var(--mat-sys-on-surface);
    }
    .lead {
      margin: 0 0 24px;
      font: var(--mat-sys-body-medium);
      color: var(--mat-sys-on-surface-variant);
    }
    .footnote {
      margin: 0;
      font: var(--mat-sys-body-small);
      color: var(--mat-sys-on-surface-variant);
      text-align: center;
    }
    @media (max-width: 480px) {
      .card {
        padding: 24px 20px;
      }
    }
  `,
})
export class AuthCard {
  readonly heading = input.required<string>();
  readonly lead = input('');
}

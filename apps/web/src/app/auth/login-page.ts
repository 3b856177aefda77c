import { HttpErrorResponse } from '@angular/common/http';
import {
  ChangeDetectionStrategy,
  Component,
  type ElementRef,
  afterNextRender,
  inject,
  input,
  signal,
  viewChild,
} from '@angular/core';
import { FormControl, FormGroup, ReactiveFormsModule } from '@angular/forms';
import { MatButton } from '@angular/material/button';
import {
  MatFormField,
  MatLabel,
  MatSuffix,
} from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import { Router } from '@angular/router';
import { inlineErrorMessage } from '../core/server-problem';
import { Icon } from '../ui/icon';
import { VisibilityToggle } from '../ui/visibility-toggle';
import { AuthCard } from './auth-card';
import { AuthStore } from './auth-store';
import { safeReturnUrl } from './return-url';

/** `/login`: the owner password, then back to the page that was asked for. */
@Component({
  selector: 'mt-login-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    ReactiveFormsModule,
    MatFormField,
    MatLabel,
    MatSuffix,
    MatInput,
    MatButton,
    VisibilityToggle,
    Icon,
    AuthCard,
  ],
  templateUrl: './login-page.html',
  styleUrl: './auth-form.scss',
})
export class LoginPage {
  private readonly auth = inject(AuthStore);
  private readonly router = inject(Router);
  private readonly passwordInput =
    viewChild.required<ElementRef<HTMLInputElement>>('passwordInput');

  /** `?returnUrl=` from the guard that sent the browser here. */
  readonly returnUrl = input<string>();

  protected readonly password = new FormControl('', { nonNullable: true });
  protected readonly form = new FormGroup({ password: this.password });
  protected readonly submitting = signal(false);
  protected readonly error = signal<string | null>(null);
  /** The server's "2 tries left before a 15-minute lock." after a wrong password, from the third failure. */
  protected readonly warning = signal<string | null>(null);
  protected readonly showPassword = signal(false);

  constructor() {
    afterNextRender(() => this.focusPassword());
  }

  protected submit(): void {
    if (this.submitting()) return;
    const password = this.password.value;
    if (!password) {
      this.error.set('Enter the owner password.');
      this.focusPassword();
      return;
    }
    this.error.set(null);
    this.warning.set(null);
    this.submitting.set(true);
    this.auth.login(password).subscribe({
      next: () =>
        void this.router.navigateByUrl(safeReturnUrl(this.returnUrl())),
      error: (error: unknown) => {
        this.submitting.set(false);
        const status = error instanceof HttpErrorResponse ? error.status : 0;
        if (status === 409) {
          // No owner yet: the first-run setup comes first.
          void this.router.navigateByUrl('/setup');
          return;
        }
        this.error.set(
          inlineErrorMessage(error, 'Logging in failed. Try again.'),
        );
        this.warning.set(status === 401 ? lockWarning(error) : null);
        // A rejected password is useless; after a rate limit or an outage the typed one may still be right.
        if (status === 401) this.password.reset();
        this.focusPassword();
      },
    });
  }

  protected clearError(): void {
    // The warning stays while typing: it is about the next try.
    if (this.error() && !this.submitting()) this.error.set(null);
  }

  private focusPassword(): void {
    this.passwordInput().nativeElement.focus();
  }
}

/** The `warning` of a 401 login answer, when the server sent one. */
function lockWarning(error: unknown): string | null {
  const body: unknown = error instanceof HttpErrorResponse ? error.error : null;
  const warning =
    body && typeof body === 'object'
      ? (body as { warning?: unknown }).warning
      : undefined;
  return typeof warning === 'string' && warning ? warning : null;
}

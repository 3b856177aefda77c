import { HttpErrorResponse } from '@angular/common/http';
import {
  ChangeDetectionStrategy,
  Component,
  computed,
  inject,
  signal,
} from '@angular/core';
import { toSignal } from '@angular/core/rxjs-interop';
import {
  FormControl,
  FormGroup,
  ReactiveFormsModule,
  Validators,
} from '@angular/forms';
import { MatButton } from '@angular/material/button';
import {
  MatError,
  MatFormField,
  MatHint,
  MatLabel,
  MatSuffix,
} from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import { Router, RouterLink } from '@angular/router';
import { map } from 'rxjs';
import {
  OWNER_PASSWORD_MAX_LENGTH,
  OWNER_PASSWORD_MIN_LENGTH,
} from '@metatronos/shared-types';
import { inlineErrorMessage } from '../core/server-problem';
import { Icon } from '../ui/icon';
import { VisibilityToggle } from '../ui/visibility-toggle';
import { AuthCard } from './auth-card';
import { AuthStore } from './auth-store';
import {
  ConfirmErrorStateMatcher,
  LiveErrorStateMatcher,
  passwordsMatch,
} from './password-rules';
import { HOME_URL } from './return-url';

/** `/setup`: first run, before any owner exists — choose the owner password. */
@Component({
  selector: 'mt-setup-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    ReactiveFormsModule,
    RouterLink,
    MatFormField,
    MatLabel,
    MatHint,
    MatError,
    MatSuffix,
    MatInput,
    MatButton,
    VisibilityToggle,
    Icon,
    AuthCard,
  ],
  templateUrl: './setup-page.html',
  styleUrl: './auth-form.scss',
})
export class SetupPage {
  private readonly auth = inject(AuthStore);
  private readonly router = inject(Router);

  protected readonly minLength = OWNER_PASSWORD_MIN_LENGTH;
  protected readonly maxLength = OWNER_PASSWORD_MAX_LENGTH;
  protected readonly liveErrors = new LiveErrorStateMatcher();
  protected readonly confirmErrors = new ConfirmErrorStateMatcher();

  protected readonly form = new FormGroup(
    {
      password: new FormControl('', {
        nonNullable: true,
        validators: [
          Validators.required,
          Validators.minLength(this.minLength),
          Validators.maxLength(this.maxLength),
        ],
      }),
      confirm: new FormControl('', {
        nonNullable: true,
        validators: [Validators.required],
      }),
    },
    { validators: passwordsMatch },
  );

  private readonly formValid = toSignal(
    this.form.statusChanges.pipe(map((status) => status === 'VALID')),
    {
      initialValue: this.form.valid,
    },
  );
  protected readonly passwordLength = toSignal(
    this.form.controls.password.valueChanges.pipe(map((value) => value.length)),
    {
      initialValue: 0,
    },
  );

  protected readonly submitting = signal(false);
  protected readonly error = signal<string | null>(null);
  /** 409: the owner was created in the meantime; offer the login instead. */
  protected readonly ownerExists = signal(false);
  protected readonly showPassword = signal(false);
  protected readonly canSubmit = computed(
    () => this.formValid() && !this.submitting(),
  );

  protected submit(): void {
    if (this.submitting()) return;
    if (this.form.invalid) {
      this.form.markAllAsDirty();
      return;
    }
    this.error.set(null);
    this.ownerExists.set(false);
    this.submitting.set(true);
    this.auth.setupOwner(this.form.controls.password.value).subscribe({
      next: () => void this.router.navigateByUrl(HOME_URL),
      error: (error: unknown) => {
        this.submitting.set(false);
        if (error instanceof HttpErrorResponse && error.status === 409) {
          this.ownerExists.set(true);
          this.error.set(
            'An owner already exists. Log in with the owner password instead.',
          );
          return;
        }
        this.error.set(
          inlineErrorMessage(error, 'Setting the password failed. Try again.'),
        );
      },
    });
  }
}

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
  DEFAULT_BUDGET,
  OWNER_PASSWORD_MAX_LENGTH,
  OWNER_PASSWORD_MIN_LENGTH,
  type ModelOption,
  type UpdateAppSettingsRequest,
} from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { OwnerTime, browserTimeZone } from '../core/owner-time';
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
import { DRAFT_CHAT_ID } from '../chat/chat-stream';
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
  private readonly api = inject(ApiClient);
  private readonly ownerTime = inject(OwnerTime);

  /** First the password, then "Connect a model". */
  protected readonly step = signal<'password' | 'model'>('password');
  /** A fresh install's caps, shown so the owner knows them before the first reply. */
  protected readonly budget = DEFAULT_BUDGET;
  /** "No cap" is an explicit choice: ticked, the connection is saved with every cap off. */
  protected readonly noCaps = signal(false);
  protected readonly usd = (value: number | null): string =>
    value === null ? 'no cap' : `$${value.toFixed(2)}`;
  protected readonly providers = [
    { value: 'gemini', label: 'Google Gemini' },
    { value: 'openai', label: 'OpenAI' },
    {
      value: 'endpoint',
      label: 'OpenAI-compatible server (Ollama, vLLM, LM Studio…)',
    },
  ] as const;
  protected readonly connect = new FormGroup({
    provider: new FormControl<'gemini' | 'openai' | 'endpoint'>('gemini', {
      nonNullable: true,
    }),
    apiKey: new FormControl('', { nonNullable: true }),
    baseUrl: new FormControl('http://127.0.0.1:11434/v1', {
      nonNullable: true,
    }),
    endpointName: new FormControl('local', {
      nonNullable: true,
      validators: [Validators.pattern(/^[A-Za-z0-9_-]{1,40}$/)],
    }),
    model: new FormControl('', { nonNullable: true }),
    timezone: new FormControl(browserTimeZone(), { nonNullable: true }),
  });
  protected readonly provider = toSignal(
    this.connect.controls.provider.valueChanges,
    { initialValue: this.connect.controls.provider.value },
  );
  protected readonly showKey = signal(false);
  protected readonly testing = signal(false);
  protected readonly saving = signal(false);
  protected readonly models = signal<ModelOption[] | null>(null);
  protected readonly connectError = signal<string | null>(null);
  private readonly pickedModel = toSignal(
    this.connect.controls.model.valueChanges,
    { initialValue: '' },
  );
  protected readonly canSave = computed(
    () => !!this.models()?.length && !!this.pickedModel() && !this.saving(),
  );

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
      next: () => {
        this.submitting.set(false);
        this.step.set('model');
        // The browser's zone is the owner's until they say otherwise; saved now, so skipping keeps it.
        this.saveTimeZone(this.connect.controls.timezone.value);
      },
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

  /** Asks the provider for its models with the key (or the endpoint) entered; nothing is saved yet. */
  protected testConnection(): void {
    if (this.testing()) return;
    const { provider, apiKey, baseUrl, endpointName } =
      this.connect.getRawValue();
    if (provider === 'endpoint' && this.connect.controls.endpointName.invalid) {
      this.connectError.set('Name the server with letters, digits, - or _.');
      return;
    }
    if (provider !== 'endpoint' && !apiKey.trim()) {
      this.connectError.set('Paste the API key first.');
      return;
    }
    this.testing.set(true);
    this.connectError.set(null);
    this.models.set(null);
    this.connect.controls.model.setValue('');
    this.api
      .testConnection(
        provider === 'endpoint'
          ? {
              endpoint: {
                name: endpointName.trim(),
                baseUrl: baseUrl.trim(),
                apiKey: apiKey.trim() || null,
              },
            }
          : { provider, apiKey: apiKey.trim() },
      )
      .subscribe({
        next: (result) => {
          this.testing.set(false);
          if (!result.ok) {
            this.connectError.set(result.error);
            return;
          }
          if (!result.models.length) {
            this.connectError.set(
              'The connection works, but no chat model is offered.',
            );
            return;
          }
          this.models.set(result.models);
          this.connect.controls.model.setValue(result.models[0].id);
        },
        error: (error: unknown) => {
          this.testing.set(false);
          this.connectError.set(
            inlineErrorMessage(error, 'Testing the connection failed.'),
          );
        },
      });
  }

  /** Saves the provider, the key, the model and the zone, then opens the chat. */
  protected saveConnection(): void {
    if (!this.canSave()) return;
    const { provider, apiKey, baseUrl, endpointName, model, timezone } =
      this.connect.getRawValue();
    const body: UpdateAppSettingsRequest = {
      primaryModel: model,
      timezone: timezone.trim(),
    };
    if (this.noCaps())
      body.budget = {
        dailyUsd: null,
        monthlyUsd: null,
        unattendedDailyUsd: null,
      };
    if (provider === 'gemini') body.geminiApiKey = apiKey.trim();
    else if (provider === 'openai') body.openaiApiKey = apiKey.trim();
    else
      body.openaiCompatible = [
        {
          name: endpointName.trim(),
          baseUrl: baseUrl.trim(),
          apiKey: apiKey.trim() || null,
        },
      ];
    this.saving.set(true);
    this.connectError.set(null);
    this.api.updateSettings(body).subscribe({
      next: (settings) => {
        this.ownerTime.use(settings.timezone);
        this.ownerTime.usePrimaryModel(settings.primaryModel);
        // "Start chatting": a new chat with its message box, not the empty list.
        void this.router.navigateByUrl(`/chat/${DRAFT_CHAT_ID}`);
      },
      error: (error: unknown) => {
        this.saving.set(false);
        this.connectError.set(
          inlineErrorMessage(error, 'Saving the connection failed.'),
        );
      },
    });
  }

  /** Later, in Settings: only the time zone (if changed here) is saved. */
  protected skip(): void {
    const zone = this.connect.controls.timezone.value.trim();
    if (zone && zone !== browserTimeZone()) this.saveTimeZone(zone);
    void this.router.navigateByUrl(HOME_URL);
  }

  private saveTimeZone(zone: string): void {
    this.api.updateSettings({ timezone: zone }).subscribe({
      next: (settings) => this.ownerTime.use(settings.timezone),
      // An unknown zone stays the server's; the Settings page can fix it.
      error: () => undefined,
    });
  }
}

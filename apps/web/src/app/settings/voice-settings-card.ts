import { HttpClient } from '@angular/common/http';
import {
  ChangeDetectionStrategy,
  Component,
  effect,
  inject,
  input,
  signal,
  untracked,
} from '@angular/core';
import { MatButton } from '@angular/material/button';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatFormField, MatHint, MatLabel } from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import type { AppSettingsView } from '@metatronos/shared-types';
import { API_BASE } from '../core/api-client';
import { inlineErrorMessage } from '../core/server-problem';

export const DEFAULT_REALTIME_MODEL = 'gpt-realtime';
export const DEFAULT_REALTIME_VOICE = 'marin';
/** OpenAI Realtime's voices (marin and cedar sound best); another name can be typed. */
export const REALTIME_VOICES = [
  'marin',
  'cedar',
  'alloy',
  'ash',
  'ballad',
  'coral',
  'echo',
  'sage',
  'shimmer',
  'verse',
] as const;

/**
 * Settings → Voice calls: the model that speaks and its voice. Its own small card
 * that saves only these two settings, so it never races the page's main form. It
 * shows the settings the page loaded (no second request).
 */
@Component({
  selector: 'mt-voice-settings-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatCard,
    MatCardContent,
    MatFormField,
    MatHint,
    MatInput,
    MatLabel,
  ],
  template: `
    <mat-card appearance="outlined" class="card" data-testid="voice-settings">
      <mat-card-content>
        <h2 class="section-title">Voice calls</h2>
        <p class="section-help">
          The microphone button by the message box calls Metatron through OpenAI
          Realtime, with your OpenAI key. Leave a field empty for the default.
        </p>
        <form class="fields" (submit)="$event.preventDefault(); save()">
          <mat-form-field appearance="outline" subscriptSizing="dynamic">
            <mat-label>Realtime model</mat-label>
            <input
              #modelInput
              matInput
              data-testid="voice-realtime-model"
              list="mt-realtime-models"
              autocomplete="off"
              [placeholder]="defaultModel"
              [value]="model()"
              (input)="model.set(modelInput.value); saved.set(false)"
            />
            <datalist id="mt-realtime-models">
              <option value="gpt-realtime"></option>
              <option value="gpt-realtime-mini"></option>
            </datalist>
            <mat-hint>Default: {{ defaultModel }}</mat-hint>
          </mat-form-field>
          <mat-form-field appearance="outline" subscriptSizing="dynamic">
            <mat-label>Voice</mat-label>
            <input
              #voiceInput
              matInput
              data-testid="voice-realtime-voice"
              list="mt-realtime-voices"
              autocomplete="off"
              [placeholder]="defaultVoice"
              [value]="voice()"
              (input)="voice.set(voiceInput.value); saved.set(false)"
            />
            <datalist id="mt-realtime-voices">
              @for (name of voices; track name) {
                <option [value]="name"></option>
              }
            </datalist>
            <mat-hint>Default: {{ defaultVoice }}</mat-hint>
          </mat-form-field>
          <div class="actions">
            <button
              mat-flat-button
              type="submit"
              data-testid="voice-settings-save"
              [disabled]="saving() || !loaded()"
            >
              {{ saving() ? 'Saving…' : 'Save' }}
            </button>
            @if (saved()) {
              <span
                class="status"
                role="status"
                data-testid="voice-settings-saved"
                >Saved: the next call uses it.</span
              >
            }
          </div>
          @if (error(); as message) {
            <p
              class="inline-error"
              role="alert"
              data-testid="voice-settings-error"
            >
              {{ message }}
            </p>
          }
        </form>
      </mat-card-content>
    </mat-card>
  `,
  styles: `
    .fields {
      display: flex;
      flex-wrap: wrap;
      gap: 12px 16px;
      align-items: flex-start;
    }
    mat-form-field {
      flex: 1 1 220px;
      min-width: 0;
    }
    .actions {
      flex-basis: 100%;
      display: flex;
      flex-wrap: wrap;
      align-items: center;
      gap: 12px;
    }
    .inline-error {
      flex-basis: 100%;
      margin: 0;
      color: var(--mat-sys-error);
    }
  `,
})
export class VoiceSettingsCard {
  private readonly http = inject(HttpClient);
  /** The settings as the page loaded them (null until then). */
  readonly settings = input<AppSettingsView | null>(null);
  protected readonly defaultModel = DEFAULT_REALTIME_MODEL;
  protected readonly defaultVoice = DEFAULT_REALTIME_VOICE;
  protected readonly voices = REALTIME_VOICES;
  protected readonly model = signal('');
  protected readonly voice = signal('');
  protected readonly loaded = signal(false);
  protected readonly saving = signal(false);
  protected readonly saved = signal(false);
  protected readonly error = signal<string | null>(null);

  constructor() {
    effect(() => {
      const settings = this.settings();
      if (settings) untracked(() => this.show(settings));
    });
  }

  protected save(): void {
    this.saving.set(true);
    this.error.set(null);
    this.http
      .patch<AppSettingsView>(`${API_BASE}/settings`, {
        realtimeModel: this.model().trim() || null,
        realtimeVoice: this.voice().trim() || null,
      })
      .subscribe({
        next: (settings) => {
          this.show(settings);
          this.saving.set(false);
          this.saved.set(true);
        },
        error: (error: unknown) => {
          this.saving.set(false);
          this.error.set(
            inlineErrorMessage(error, 'The voice settings were not saved.'),
          );
        },
      });
  }

  private show(settings: AppSettingsView): void {
    this.model.set(settings.realtimeModel ?? '');
    this.voice.set(settings.realtimeVoice ?? '');
    this.loaded.set(true);
  }
}

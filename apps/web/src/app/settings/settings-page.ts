import {
  ChangeDetectionStrategy,
  Component,
  computed,
  inject,
  signal,
} from '@angular/core';
import { MatButton, MatIconButton } from '@angular/material/button';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatFormField, MatHint, MatLabel } from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import { MatSlideToggle } from '@angular/material/slide-toggle';
import { MatProgressBar } from '@angular/material/progress-bar';
import { MatSnackBar } from '@angular/material/snack-bar';
import { RouterLink } from '@angular/router';
import type { AppSettingsView } from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { liveResource } from '../core/live-resource';
import { inlineErrorMessage } from '../core/server-problem';
import { Icon } from '../ui/icon';
import { ServerError } from '../ui/server-error';
import { BackupCard } from './backup-card';
import { ConnectedAgentsCard } from './connected-agents-card';
import { BudgetSettings } from './budget-settings';
import { VoiceSettingsCard } from './voice-settings-card';
import { SecretField } from './secret-field';
import {
  type EndpointDraft,
  type SecretDraft,
  type SettingsDraft,
  draftFrom,
  endpointErrors,
  losesKeyOnRename,
  needsKeyForNewBaseUrl,
  modelWarning,
  newEndpointDraft,
  secretChange,
  settingsChanges,
} from './settings-draft';
import { OwnerTimePipe } from '../core/owner-time';

/** The list's "Other…" entry (no model id has this form). */
const OTHER_MODEL = ' other';

export const PRIMARY_MODEL_SUGGESTIONS = [
  'gemini-2.5-flash',
  'gemini-2.5-pro',
  'gemini-2.5-flash-lite',
  'gpt-4.1-mini',
  'gpt-4.1',
  'gpt-4o-mini',
  'o4-mini',
];
export const IMAGE_MODEL_SUGGESTIONS = [
  'gemini-2.5-flash-image',
  'imagen-4.0-generate-001',
  'gpt-image-1',
];

/** Every IANA zone the browser knows, for the time zone suggestions. */
export function supportedTimeZones(): string[] {
  try {
    return Intl.supportedValuesOf('timeZone');
  } catch {
    return [];
  }
}

/** `/settings`: provider keys, OpenAI-compatible endpoints, models, web search and the time zone. */
@Component({
  selector: 'mt-settings-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    OwnerTimePipe,
    MatButton,
    MatIconButton,
    MatCard,
    MatCardContent,
    MatFormField,
    MatLabel,
    MatHint,
    MatInput,
    MatProgressBar,
    Icon,
    ServerError,
    SecretField,
    RouterLink,
    BackupCard,
    ConnectedAgentsCard,
    BudgetSettings,
    VoiceSettingsCard,
    MatSlideToggle,
  ],
  templateUrl: './settings-page.html',
  styleUrl: './settings-page.scss',
})
export class SettingsPage {
  private readonly api = inject(ApiClient);
  private readonly snackBar = inject(MatSnackBar);

  protected readonly saved = signal<AppSettingsView | null>(null);
  protected readonly draft = signal<SettingsDraft | null>(null);
  protected readonly saving = signal(false);
  protected readonly saveError = signal<string | null>(null);

  protected readonly timeZones = supportedTimeZones();
  protected readonly imageSuggestions = IMAGE_MODEL_SUGGESTIONS;
  protected readonly losesKeyOnRename = losesKeyOnRename;
  protected readonly needsKeyForNewBaseUrl = needsKeyForNewBaseUrl;

  protected readonly changes = computed(() => {
    const saved = this.saved();
    const draft = this.draft();
    return saved && draft ? settingsChanges(saved, draft) : {};
  });
  protected readonly dirty = computed(
    () => Object.keys(this.changes()).length > 0,
  );
  protected readonly rowErrors = computed(() =>
    endpointErrors(this.draft()?.openaiCompatible ?? []),
  );
  protected readonly timezoneError = computed(() => {
    const zone = this.draft()?.timezone.trim() ?? '';
    return zone ? null : 'Enter a time zone, e.g. Europe/Paris.';
  });
  protected readonly timezoneUnknown = computed(() => {
    const zone = this.draft()?.timezone.trim() ?? '';
    return (
      !!zone &&
      this.timeZones.length > 0 &&
      zone !== 'UTC' &&
      !this.timeZones.includes(zone)
    );
  });
  protected readonly canSave = computed(
    () =>
      this.dirty() &&
      this.rowErrors().size === 0 &&
      !this.timezoneError() &&
      !this.saving(),
  );
  /** The models the configured providers list (`GET /api/settings/models`), offered first; empty until loaded. */
  protected readonly providerModels = signal<readonly string[]>([]);
  protected readonly modelSuggestions = computed(() => {
    const endpoints = (this.draft()?.openaiCompatible ?? [])
      .map((row) => row.name.trim())
      .filter(Boolean);
    return [
      ...new Set([
        ...this.providerModels(),
        ...PRIMARY_MODEL_SUGGESTIONS,
        ...endpoints.map((name) => `${name}/`),
      ]),
    ];
  });
  /** The owner picked "Other…" in the list: the free-text field shows even for an id the list holds. */
  private readonly otherChosen = signal(false);
  protected readonly otherModelValue = OTHER_MODEL;
  /**
   * The primary model is chosen from the providers' list, as in the first-run step; "Other…" (or no list
   * yet: no key saved, a provider not answering) opens a free-text field for an endpoint's model or an id
   * not listed.
   */
  protected readonly primaryIsOther = computed(() => {
    const listed = this.providerModels();
    if (!listed.length || this.otherChosen()) return true;
    const model = this.draft()?.primaryModel.trim() ?? '';
    return model !== '' && !listed.includes(model);
  });
  protected readonly primarySelection = computed(() =>
    this.primaryIsOther()
      ? OTHER_MODEL
      : (this.draft()?.primaryModel.trim() ?? ''),
  );

  protected choosePrimary(value: string): void {
    if (value === OTHER_MODEL) {
      this.otherChosen.set(true);
      return;
    }
    this.otherChosen.set(false);
    this.patch({ primaryModel: value });
  }

  protected readonly primaryModelWarning = computed(() => {
    const saved = this.saved();
    const draft = this.draft();
    if (!saved || !draft) return null;
    const hasKey = (field: 'geminiApiKey' | 'openaiApiKey') => {
      const change = secretChange(draft[field], saved[field]);
      return change === undefined ? saved[field] !== null : change !== null;
    };
    return modelWarning(draft.primaryModel, {
      gemini: hasKey('geminiApiKey'),
      openai: hasKey('openaiApiKey'),
      endpoints: draft.openaiCompatible.map((row) => row.name.trim()),
    });
  });

  /** Follows changes from another tab, unless there are edits here. */
  private readonly live = liveResource({
    load: () => this.api.settings(),
    apply: (settings) => this.apply(settings),
    hasValue: () => !!this.saved(),
    failure: "Couldn't load the settings",
    event: {
      name: 'settings.updated',
      isOwn: (event) => event.updatedAt === this.saved()?.updatedAt,
    },
    dirty: this.dirty,
    save: () => this.save(),
  });
  protected readonly loading = this.live.loading;
  protected readonly loadProblem = this.live.problem;
  protected readonly reload = this.live.reload;

  protected patch(changes: Partial<SettingsDraft>): void {
    this.draft.update((draft) => draft && { ...draft, ...changes });
    if (this.saveError()) this.saveError.set(null);
  }

  protected setSecret(
    field: 'geminiApiKey' | 'openaiApiKey' | 'braveApiKey',
    value: SecretDraft,
  ): void {
    this.patch({ [field]: value });
  }

  protected addEndpoint(): void {
    this.patch({
      openaiCompatible: [
        ...(this.draft()?.openaiCompatible ?? []),
        newEndpointDraft(),
      ],
    });
  }

  protected updateEndpoint(key: number, changes: Partial<EndpointDraft>): void {
    const rows = this.draft()?.openaiCompatible ?? [];
    this.patch({
      openaiCompatible: rows.map((row) =>
        row.key === key ? { ...row, ...changes } : row,
      ),
    });
  }

  /** The last connection test of each endpoint row (by row key): running, or its outcome in words. */
  protected readonly endpointTests = signal<
    ReadonlyMap<number, { state: 'testing' | 'ok' | 'error'; text: string }>
  >(new Map());

  /** Tries the row as typed (a masked or untouched key: the one stored for the same name and address). */
  protected testEndpoint(row: EndpointDraft): void {
    const apiKey = row.apiKey.remove
      ? null
      : row.apiKey.value.trim() || row.savedKey;
    const set = (state: 'testing' | 'ok' | 'error', text: string) =>
      this.endpointTests.update((tests) =>
        new Map(tests).set(row.key, { state, text }),
      );
    set('testing', 'Testing…');
    this.api
      .testConnection({
        endpoint: {
          name: row.name.trim(),
          baseUrl: row.baseUrl.trim(),
          apiKey,
        },
      })
      .subscribe({
        next: (result) =>
          result.ok
            ? set(
                'ok',
                `Works: ${result.models.length} model${result.models.length === 1 ? '' : 's'} offered.`,
              )
            : set('error', result.error),
        error: (error: unknown) =>
          set(
            'error',
            inlineErrorMessage(error, 'The test could not run. Try again.'),
          ),
      });
  }

  protected removeEndpoint(key: number): void {
    const rows = this.draft()?.openaiCompatible ?? [];
    this.patch({ openaiCompatible: rows.filter((row) => row.key !== key) });
  }

  protected discard(): void {
    const saved = this.saved();
    if (saved) this.apply(saved);
    this.saveError.set(null);
  }

  protected save(): void {
    if (!this.canSave()) return;
    this.saving.set(true);
    this.saveError.set(null);
    this.api.updateSettings(this.changes()).subscribe({
      next: (settings) => {
        this.saving.set(false);
        this.apply(settings);
        this.snackBar.open('Settings saved.', undefined, { duration: 3000 });
      },
      error: (error: unknown) => {
        this.saving.set(false);
        this.saveError.set(
          inlineErrorMessage(error, 'Saving failed. Try again.'),
        );
      },
    });
  }

  private apply(settings: AppSettingsView): void {
    this.otherChosen.set(false);
    this.saved.set(settings);
    this.draft.set(draftFrom(settings));
    this.loadProviderModels();
  }

  /** Asks the configured providers for their models (a failure only leaves the static suggestions). */
  private loadProviderModels(): void {
    this.api.models().subscribe({
      next: (list) => this.providerModels.set(list.models.map((m) => m.id)),
      error: () => this.providerModels.set([]),
    });
  }
}

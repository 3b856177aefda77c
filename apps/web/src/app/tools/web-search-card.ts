import {
  ChangeDetectionStrategy,
  Component,
  computed,
  inject,
  signal,
} from '@angular/core';
import { MatButton } from '@angular/material/button';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatProgressBar } from '@angular/material/progress-bar';
import { MatSnackBar } from '@angular/material/snack-bar';
import {
  WEB_SEARCH_TEST_DEFAULT_QUERY,
  type AppSettingsView,
  type WebSearchTestResponse,
} from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { liveResource } from '../core/live-resource';
import { inlineErrorMessage } from '../core/server-problem';
import { SecretField } from '../settings/secret-field';
import {
  type SecretDraft,
  UNCHANGED_SECRET,
  secretChange,
} from '../settings/settings-draft';
import { Icon } from '../ui/icon';
import { ServerError } from '../ui/server-error';

/** The `web_search` tool: DuckDuckGo without a key, Brave Search with one; save or remove the key, and test the engine in use. */
@Component({
  selector: 'mt-web-search-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatCard,
    MatCardContent,
    MatProgressBar,
    Icon,
    ServerError,
    SecretField,
  ],
  templateUrl: './web-search-card.html',
  styleUrl: './web-search-card.scss',
})
export class WebSearchCard {
  private readonly api = inject(ApiClient);
  private readonly snackBar = inject(MatSnackBar);

  protected readonly testQuery = WEB_SEARCH_TEST_DEFAULT_QUERY;
  /** The settings as the server last sent them (the key masked); null until loaded. */
  protected readonly settings = signal<AppSettingsView | null>(null);
  protected readonly savedKey = computed(
    () => this.settings()?.braveApiKey ?? null,
  );
  protected readonly draft = signal<SecretDraft>(UNCHANGED_SECRET);
  protected readonly saving = signal(false);
  protected readonly saveError = signal<string | null>(null);
  protected readonly testing = signal(false);
  protected readonly outcome = signal<WebSearchTestResponse | null>(null);
  protected readonly testError = signal<string | null>(null);

  /** What Save sends for `braveApiKey`: a new key, null to remove it, undefined when nothing changed. */
  private readonly change = computed(() =>
    secretChange(this.draft(), this.savedKey()),
  );
  protected readonly dirty = computed(() => this.change() !== undefined);
  /** The engine the saved settings select (what the tool and Test use). */
  protected readonly engineName = computed(() =>
    this.savedKey() ? 'Brave Search' : 'DuckDuckGo',
  );
  protected readonly canSave = computed(() => this.dirty() && !this.saving());
  protected readonly canTest = computed(
    () =>
      !!this.settings() && !this.dirty() && !this.testing() && !this.saving(),
  );
  protected readonly testHint = computed(() => {
    if (!this.settings()) return null;
    if (this.dirty()) return 'Save the key to test it.';
    return null;
  });

  /** Follows the key changed elsewhere (the Settings page, another tab), unless there is an edit here. */
  private readonly live = liveResource({
    load: () => this.api.settings(),
    apply: (settings) => this.apply(settings),
    hasValue: () => !!this.settings(),
    failure: "Couldn't load the web search settings",
    event: {
      name: 'settings.updated',
      isOwn: (event) => event.updatedAt === this.settings()?.updatedAt,
    },
    dirty: this.dirty,
    save: () => this.save(),
  });
  protected readonly loading = this.live.loading;
  protected readonly loadProblem = this.live.problem;
  protected readonly reload = this.live.reload;

  protected edit(draft: SecretDraft): void {
    this.draft.set(draft);
    this.saveError.set(null);
  }

  protected discard(): void {
    this.draft.set(UNCHANGED_SECRET);
    this.saveError.set(null);
  }

  protected save(): void {
    const braveApiKey = this.change();
    if (!this.canSave() || braveApiKey === undefined) return;
    this.saving.set(true);
    this.saveError.set(null);
    this.api.updateSettings({ braveApiKey }).subscribe({
      next: (settings) => {
        this.saving.set(false);
        this.apply(settings);
        this.snackBar.open(
          braveApiKey === null
            ? 'Brave Search key removed.'
            : 'Brave Search key saved.',
          undefined,
          { duration: 3000 },
        );
      },
      error: (error: unknown) => {
        this.saving.set(false);
        this.saveError.set(
          inlineErrorMessage(error, 'Saving failed. Try again.'),
        );
      },
    });
  }

  protected test(): void {
    if (!this.canTest()) return;
    this.testing.set(true);
    this.outcome.set(null);
    this.testError.set(null);
    this.api.testWebSearch().subscribe({
      next: (outcome) => {
        this.testing.set(false);
        this.outcome.set(outcome);
      },
      error: (error: unknown) => {
        this.testing.set(false);
        this.testError.set(
          inlineErrorMessage(error, 'The test could not run. Try again.'),
        );
      },
    });
  }

  private apply(settings: AppSettingsView): void {
    if (settings.braveApiKey !== this.savedKey()) {
      // An outcome was about the previous key (or engine).
      this.outcome.set(null);
      this.testError.set(null);
    }
    this.settings.set(settings);
    this.draft.set(UNCHANGED_SECRET);
  }
}

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
import { MatProgressBar } from '@angular/material/progress-bar';
import { MatSnackBar } from '@angular/material/snack-bar';
import {
  SECRET_MASK_PREFIX,
  type AppSettingsView,
  type AuthProfileInput,
  type UpdateAppSettingsRequest,
} from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { liveResource } from '../core/live-resource';
import { inlineErrorMessage } from '../core/server-problem';
import { Icon } from '../ui/icon';
import { ServerError } from '../ui/server-error';

/** One allow-list row being edited. */
interface HostRow {
  key: number;
  value: string;
}

/** One auth profile being edited; the saved value is only ever known by its mask. */
interface ProfileRow {
  key: number;
  id: string;
  urlPrefix: string;
  header: string;
  /** The masked value as saved, null for a new row. */
  savedMask: string | null;
  /** The prefix the saved value belongs to (a changed prefix needs the value again). */
  savedPrefix: string | null;
  /** A new value typed; empty keeps the saved one. */
  value: string;
}

interface FetchDraft {
  hosts: HostRow[];
  profiles: ProfileRow[];
}

let nextRowKey = 1;

function draftFrom(settings: AppSettingsView): FetchDraft {
  return {
    hosts: settings.urlFetchAllowHosts.map((value) => ({
      key: nextRowKey++,
      value,
    })),
    profiles: settings.authProfiles.map((p) => ({
      key: nextRowKey++,
      id: p.id,
      urlPrefix: p.urlPrefix,
      header: p.header,
      savedMask: p.value,
      savedPrefix: p.urlPrefix,
      value: '',
    })),
  };
}

/** A typed value, unless it is empty or a mask pasted back (which means "unchanged"). */
function typedValue(row: ProfileRow): string | null {
  const value = row.value.trim();
  return value && !value.startsWith(SECRET_MASK_PREFIX) ? value : null;
}

/** The PATCH body for the card's two fields. */
function fetchRequest(
  draft: FetchDraft,
): Required<
  Pick<UpdateAppSettingsRequest, 'urlFetchAllowHosts' | 'authProfiles'>
> {
  return {
    urlFetchAllowHosts: draft.hosts.map((h) => h.value.trim()).filter(Boolean),
    authProfiles: draft.profiles.map((row): AuthProfileInput => {
      const profile: AuthProfileInput = {
        id: row.id.trim(),
        urlPrefix: row.urlPrefix.trim(),
        header: row.header.trim(),
      };
      // Omitted: the server keeps the stored value of the same id and prefix.
      const value = typedValue(row);
      if (value) profile.value = value;
      return profile;
    }),
  };
}

/**
 * The `url_fetch` settings: the private `host:port` entries it may reach (a home server)
 * and the auth profiles whose header it adds under a URL prefix. Profile values are
 * write-only: the page only ever shows their mask.
 */
@Component({
  selector: 'mt-url-fetch-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatIconButton,
    MatCard,
    MatCardContent,
    MatFormField,
    MatHint,
    MatLabel,
    MatInput,
    MatProgressBar,
    Icon,
    ServerError,
  ],
  templateUrl: './url-fetch-card.html',
  styleUrl: './url-fetch-card.scss',
})
export class UrlFetchCard {
  private readonly api = inject(ApiClient);
  private readonly snackBar = inject(MatSnackBar);

  protected readonly settings = signal<AppSettingsView | null>(null);
  protected readonly draft = signal<FetchDraft>({ hosts: [], profiles: [] });
  protected readonly saving = signal(false);
  protected readonly saveError = signal<string | null>(null);

  protected readonly dirty = computed(() => {
    const saved = this.settings();
    if (!saved) return false;
    const request = fetchRequest(this.draft());
    return (
      JSON.stringify(request.urlFetchAllowHosts) !==
        JSON.stringify(saved.urlFetchAllowHosts) ||
      JSON.stringify(request.authProfiles) !==
        JSON.stringify(
          saved.authProfiles.map(({ id, urlPrefix, header }) => ({
            id,
            urlPrefix,
            header,
          })),
        )
    );
  });
  protected readonly canSave = computed(() => this.dirty() && !this.saving());

  private readonly live = liveResource({
    load: () => this.api.settings(),
    apply: (settings) => this.apply(settings),
    hasValue: () => !!this.settings(),
    failure: "Couldn't load the fetch settings",
    event: {
      name: 'settings.updated',
      isOwn: (event) => event.updatedAt === this.settings()?.updatedAt,
    },
    dirty: this.dirty,
  });
  protected readonly loading = this.live.loading;
  protected readonly loadProblem = this.live.problem;
  protected readonly reload = this.live.reload;

  /** A saved profile whose prefix changed without a new value: the server refuses that, say so first. */
  protected needsValueAgain(row: ProfileRow): boolean {
    return (
      row.savedPrefix !== null &&
      row.urlPrefix.trim() !== row.savedPrefix &&
      !typedValue(row)
    );
  }

  protected addHost(): void {
    this.edit((d) => ({
      ...d,
      hosts: [...d.hosts, { key: nextRowKey++, value: '' }],
    }));
  }

  protected setHost(key: number, value: string): void {
    this.edit((d) => ({
      ...d,
      hosts: d.hosts.map((h) => (h.key === key ? { ...h, value } : h)),
    }));
  }

  protected removeHost(key: number): void {
    this.edit((d) => ({ ...d, hosts: d.hosts.filter((h) => h.key !== key) }));
  }

  protected addProfile(): void {
    this.edit((d) => ({
      ...d,
      profiles: [
        ...d.profiles,
        {
          key: nextRowKey++,
          id: '',
          urlPrefix: '',
          header: 'Authorization',
          savedMask: null,
          savedPrefix: null,
          value: '',
        },
      ],
    }));
  }

  protected setProfile(key: number, change: Partial<ProfileRow>): void {
    this.edit((d) => ({
      ...d,
      profiles: d.profiles.map((p) =>
        p.key === key ? { ...p, ...change } : p,
      ),
    }));
  }

  protected removeProfile(key: number): void {
    this.edit((d) => ({
      ...d,
      profiles: d.profiles.filter((p) => p.key !== key),
    }));
  }

  protected discard(): void {
    const saved = this.settings();
    if (saved) this.draft.set(draftFrom(saved));
    this.saveError.set(null);
  }

  protected save(): void {
    if (!this.canSave()) return;
    this.saving.set(true);
    this.saveError.set(null);
    this.api.updateSettings(fetchRequest(this.draft())).subscribe({
      next: (settings) => {
        this.saving.set(false);
        this.apply(settings);
        this.snackBar.open('Fetch settings saved.', undefined, {
          duration: 3000,
        });
      },
      error: (error: unknown) => {
        this.saving.set(false);
        this.saveError.set(
          inlineErrorMessage(error, 'Saving failed. Try again.'),
        );
      },
    });
  }

  private edit(change: (draft: FetchDraft) => FetchDraft): void {
    this.draft.update(change);
    this.saveError.set(null);
  }

  private apply(settings: AppSettingsView): void {
    this.settings.set(settings);
    this.draft.set(draftFrom(settings));
  }
}

import {
  ChangeDetectionStrategy,
  Component,
  computed,
  inject,
  signal,
} from '@angular/core';
import { takeUntilDestroyed } from '@angular/core/rxjs-interop';
import { MatButton } from '@angular/material/button';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatCheckbox } from '@angular/material/checkbox';
import { MatFormField, MatHint, MatLabel } from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import { MatProgressBar } from '@angular/material/progress-bar';
import { MatSnackBar } from '@angular/material/snack-bar';
import { filter, forkJoin } from 'rxjs';
import type {
  AppSettingsView,
  TelegramInboundMessage,
  TelegramPermission,
  TelegramStatus,
  TelegramStatusView,
  UpdateAppSettingsRequest,
} from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { EventStream } from '../core/event-stream';
import { liveResource } from '../core/live-resource';
import { inlineErrorMessage } from '../core/server-problem';
import { SecretField } from '../settings/secret-field';
import {
  type SecretDraft,
  UNCHANGED_SECRET,
  secretChange,
} from '../settings/settings-draft';
import { Icon } from '../ui/icon';
import { type InboundItem, InboundMessages } from './inbound-messages';
import { NEW_CONTACT_PERMISSIONS } from './new-contact-permissions';
import { ServerError } from '../ui/server-error';

export const DEFAULT_TELEGRAM_API_ROOT = 'https://api.telegram.org';

const STATUS_LABELS: Record<TelegramStatus, string> = {
  disconnected: 'Off: no bot token',
  connecting: 'Connecting…',
  connected: 'Connected',
  error: 'Not connected',
};

type PermissionFlag = 'canRead' | 'canReply' | 'trusted';

interface TelegramState {
  settings: AppSettingsView;
  status: TelegramStatusView;
  permissions: TelegramPermission[];
  messages: TelegramInboundMessage[];
}

/**
 * The Telegram bot: its token and Bot API server, its live status, the chats
 * Metatron may read and answer, and the latest messages, where a stranger can
 * be allowed in one click.
 */
@Component({
  selector: 'mt-telegram-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatCard,
    MatCardContent,
    MatCheckbox,
    MatFormField,
    MatHint,
    MatInput,
    MatLabel,
    MatProgressBar,
    Icon,
    InboundMessages,
    SecretField,
    ServerError,
  ],
  templateUrl: './telegram-card.html',
  styleUrl: './telegram-card.scss',
})
export class TelegramCard {
  private readonly api = inject(ApiClient);
  private readonly snackBar = inject(MatSnackBar);

  protected readonly settings = signal<AppSettingsView | null>(null);
  protected readonly status = signal<TelegramStatusView | null>(null);
  protected readonly permissions = signal<TelegramPermission[]>([]);
  protected readonly messages = signal<TelegramInboundMessage[]>([]);

  protected readonly tokenDraft = signal<SecretDraft>(UNCHANGED_SECRET);
  protected readonly rootDraft = signal<string | null>(null);
  protected readonly saving = signal(false);
  protected readonly saveError = signal<string | null>(null);
  protected readonly busy = signal<string | null>(null);

  protected readonly savedToken = computed(
    () => this.settings()?.telegramBotToken ?? null,
  );
  protected readonly savedRoot = computed(
    () => this.settings()?.telegramApiRoot ?? DEFAULT_TELEGRAM_API_ROOT,
  );
  private readonly tokenChange = computed(() =>
    secretChange(this.tokenDraft(), this.savedToken()),
  );
  private readonly rootChange = computed(() => {
    const draft = this.rootDraft();
    if (draft === null) return undefined;
    const root = draft.trim().replace(/\/+$/, '') || DEFAULT_TELEGRAM_API_ROOT;
    return root === this.savedRoot() ? undefined : root;
  });
  protected readonly dirty = computed(
    () => this.tokenChange() !== undefined || this.rootChange() !== undefined,
  );
  protected readonly statusLabel = computed(() => {
    const status = this.status();
    if (!status) return '';
    if (status.status === 'connected' && status.username)
      return `Connected as @${status.username}`;
    return STATUS_LABELS[status.status];
  });
  protected readonly inboundItems = computed(() =>
    this.messages().map(
      (message): InboundItem => ({
        id: message.id,
        key: message.chatId,
        sender: message.fromName,
        where: message.chatTitle,
        text: message.text,
        at: message.at,
        processing: message.processing,
        reason: message.reason,
        permitted: message.permitted,
        reply: message.reply ?? null,
      }),
    ),
  );
  protected readonly rootHint = computed(() =>
    this.rootChange() !== undefined && this.savedToken()
      ? 'A new server needs the token again: paste it above.'
      : 'Leave as is unless you run your own Bot API server.',
  );

  private readonly live = liveResource<TelegramState>({
    load: () =>
      forkJoin({
        settings: this.api.settings(),
        status: this.api.telegramStatus(),
        permissions: this.api.telegramPermissions(),
        messages: this.api.telegramMessages(),
      }),
    apply: (state) => {
      this.settings.set(state.settings);
      this.status.set(state.status);
      this.permissions.set(state.permissions);
      this.messages.set(state.messages);
    },
    hasValue: () => !!this.settings(),
    failure: "Couldn't load Telegram",
    dirty: this.dirty,
    save: () => this.save(),
  });
  protected readonly loading = this.live.loading;
  protected readonly loadProblem = this.live.problem;
  protected readonly reload = this.live.reload;

  /** Bumped by every status event: a status fetched before the latest event is stale and dropped. */
  private statusEvents = 0;

  constructor() {
    const events = inject(EventStream);
    events
      .on('telegram.status')
      .pipe(takeUntilDestroyed())
      .subscribe(({ status, username, reason }) => {
        this.statusEvents++;
        this.status.set({ status, username, reason });
      });
    events
      .on('telegram.message')
      .pipe(takeUntilDestroyed())
      .subscribe(() => this.refreshLists());
    // The auto-reply answered (or skipped) a message: its state and answer show without a reload.
    events
      .on('channels.inbound')
      .pipe(
        filter((event) => event.channel === 'telegram'),
        takeUntilDestroyed(),
      )
      .subscribe(() => this.refreshLists());
    events
      .on('telegram.permissions.changed')
      .pipe(takeUntilDestroyed())
      .subscribe(() => this.refreshLists());
  }

  protected editRoot(value: string): void {
    this.rootDraft.set(value);
    this.saveError.set(null);
  }

  protected editToken(draft: SecretDraft): void {
    this.tokenDraft.set(draft);
    this.saveError.set(null);
  }

  protected discard(): void {
    this.tokenDraft.set(UNCHANGED_SECRET);
    this.rootDraft.set(null);
    this.saveError.set(null);
  }

  protected save(): void {
    if (!this.dirty() || this.saving()) return;
    const body: UpdateAppSettingsRequest = {};
    const token = this.tokenChange();
    const root = this.rootChange();
    if (token !== undefined) body.telegramBotToken = token;
    if (root !== undefined) body.telegramApiRoot = root;
    this.saving.set(true);
    this.saveError.set(null);
    this.api.updateSettings(body).subscribe({
      next: (settings) => {
        this.saving.set(false);
        this.settings.set(settings);
        this.discard();
        this.snackBar.open(
          token === null ? 'Telegram bot token removed.' : 'Telegram saved.',
          undefined,
          { duration: 3000 },
        );
        // The bot may connect before this answer arrives: an event seen meanwhile wins.
        const seen = this.statusEvents;
        this.api.telegramStatus().subscribe((s) => {
          if (this.statusEvents === seen) this.status.set(s);
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

  /** One click: the stranger may write and get answers (Read and Reply on, not trusted, as on WhatsApp). */
  protected allow(item: InboundItem): void {
    const message = this.messages().find((m) => m.id === item.id);
    if (!message) return;
    const displayName =
      message.chatType === 'private'
        ? message.fromName
        : (message.chatTitle ?? message.fromName);
    this.busy.set(message.chatId);
    this.api
      .createTelegramPermission({
        chatId: message.chatId,
        displayName,
        ...NEW_CONTACT_PERMISSIONS,
      })
      .subscribe({
        next: () => {
          this.busy.set(null);
          this.snackBar.open(`${displayName} may now use the bot.`, undefined, {
            duration: 3000,
          });
          this.refreshLists();
        },
        error: (error: unknown) => {
          this.busy.set(null);
          this.snackBar.open(
            inlineErrorMessage(error, 'That did not work. Try again.'),
            'Close',
          );
        },
      });
  }

  protected toggle(
    permission: TelegramPermission,
    flag: PermissionFlag,
    value: boolean,
  ): void {
    this.busy.set(permission.id);
    this.api
      .updateTelegramPermission(permission.id, { [flag]: value })
      .subscribe({
        next: (updated) => {
          this.busy.set(null);
          this.permissions.update((list) =>
            list.map((p) => (p.id === updated.id ? updated : p)),
          );
        },
        error: (error: unknown) => {
          this.busy.set(null);
          this.snackBar.open(
            inlineErrorMessage(error, 'That did not work. Try again.'),
            'Close',
          );
        },
      });
  }

  protected remove(permission: TelegramPermission): void {
    if (
      !confirm(
        `Remove ${permission.displayName}? Metatron will no longer read or answer this Telegram chat.`,
      )
    )
      return;
    this.busy.set(permission.id);
    this.api.deleteTelegramPermission(permission.id).subscribe({
      next: () => {
        this.busy.set(null);
        this.refreshLists();
      },
      error: (error: unknown) => {
        this.busy.set(null);
        this.snackBar.open(
          inlineErrorMessage(error, 'That did not work. Try again.'),
          'Close',
        );
      },
    });
  }

  private refreshLists(): void {
    forkJoin({
      permissions: this.api.telegramPermissions(),
      messages: this.api.telegramMessages(),
    }).subscribe({
      next: ({ permissions, messages }) => {
        this.permissions.set(permissions);
        this.messages.set(messages);
      },
      error: () => undefined,
    });
  }
}

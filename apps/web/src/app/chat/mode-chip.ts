import {
  ChangeDetectionStrategy,
  Component,
  Injector,
  afterNextRender,
  computed,
  effect,
  inject,
  input,
  output,
  signal,
  viewChild,
} from '@angular/core';
import { MatMenu, MatMenuItem, MatMenuTrigger } from '@angular/material/menu';
import type {
  ChatSummary,
  ModeSwitchBy,
  ModeView,
} from '@metatronos/shared-types';
import { AccountDirectory } from '../accounts/account-directory';
import { ApiClient } from '../core/api-client';
import { inlineErrorMessage } from '../core/server-problem';
import { modeDescription, modeLabel } from './mode-words';

export { modeLabel } from './mode-words';

/** The chat's event line for a mode switch. */
export function modeSwitchText(mode: string, by: ModeSwitchBy): string {
  return by === 'owner'
    ? `You switched to ${modeLabel(mode)}`
    : `Switched to ${modeLabel(mode)}`;
}

/**
 * The chip by the composer: the conversation's mode (and the selected account),
 * and a menu of the modes with their one-line descriptions to switch it.
 */
@Component({
  selector: 'mt-mode-chip',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatMenu, MatMenuItem, MatMenuTrigger],
  template: `
    <button
      type="button"
      class="chip"
      data-testid="mode-chip"
      [matMenuTriggerFor]="menu"
      [disabled]="disabled() || switching()"
      [attr.aria-label]="'Mode: ' + label() + '. Choose another mode'"
      title="The tools Metatron has in this chat"
      (pointerenter)="loadModes()"
      (focus)="loadModes()"
      (menuOpened)="loadModes()"
    >
      <span class="label">{{ label() }}</span>
      @if (accountLabel(); as account) {
        <span class="account" data-testid="mode-chip-account">
          · {{ account }}</span
        >
      }
    </button>
    <!-- The chip sits by the message box at the bottom: the menu opens upwards (downwards only when
         there is more room there), with every mode in view. -->
    <mat-menu #menu="matMenu" class="mt-mode-menu" yPosition="above">
      @for (option of modes(); track option.name) {
        <button
          mat-menu-item
          type="button"
          [attr.data-testid]="'mode-option-' + option.name"
          [attr.aria-current]="option.name === mode() ? 'true' : null"
          [attr.title]="modeDescription(option.name, option.description)"
          (click)="choose(option.name)"
        >
          <span class="option">
            <strong>{{ modeLabel(option.name) }}</strong>
            <span class="description">{{
              modeDescription(option.name, option.description)
            }}</span>
          </span>
        </button>
      } @empty {
        <p class="menu-note">{{ loadError() ?? 'Loading modes…' }}</p>
      }
    </mat-menu>
    @if (error(); as message) {
      <span class="error" role="alert" data-testid="mode-chip-error">{{
        message
      }}</span>
    }
  `,
  styles: `
    :host {
      display: inline-flex;
      align-items: center;
      gap: 0.5rem;
      min-width: 0;
    }
    .chip {
      display: inline-flex;
      align-items: center;
      gap: 0.25rem;
      max-width: 100%;
      padding: 0.15rem 0.65rem;
      border: 1px solid var(--mat-sys-outline-variant);
      border-radius: 999px;
      background: var(--mat-sys-surface-container);
      color: var(--mat-sys-on-surface);
      font: var(--mat-sys-label-medium);
      cursor: pointer;
    }
    .chip:disabled {
      cursor: default;
      opacity: 0.6;
    }
    .chip:focus-visible {
      outline: 2px solid var(--mat-sys-primary);
      outline-offset: 2px;
    }
    .account {
      color: var(--mat-sys-on-surface-variant);
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
    }
    .option {
      display: flex;
      flex-direction: column;
      min-width: 0;
      line-height: 1.3;
    }
    /* One line each (the whole text in the tooltip), so every mode fits the screen. */
    .description {
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-body-small);
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
    }
    .menu-note {
      margin: 0.5rem 1rem;
    }
    .error {
      color: var(--mat-sys-error);
      font: var(--mat-sys-body-small);
    }
  `,
})
export class ModeChip {
  private readonly api = inject(ApiClient);
  private readonly injector = inject(Injector);
  private readonly trigger = viewChild(MatMenuTrigger);

  readonly chatId = input.required<string>();
  readonly mode = input('default');
  /** The selected account's id, when the conversation has one. */
  readonly account = input<string | null>(null);
  private readonly accounts = inject(AccountDirectory);
  /** The name (or address) of the account the mode works on; nothing while it is unknown. */
  protected readonly accountLabel = computed(() =>
    this.accounts.inUse(this.mode(), this.account()),
  );
  readonly disabled = input(false);
  /** The owner switched the mode: the chat as the server stored it. */
  readonly switched = output<ChatSummary>();

  protected readonly modes = signal<ModeView[]>([]);
  protected readonly loadError = signal<string | null>(null);
  protected readonly error = signal<string | null>(null);
  protected readonly switching = signal(false);
  protected readonly label = computed(() => modeLabel(this.mode()));
  protected readonly modeLabel = modeLabel;
  protected readonly modeDescription = modeDescription;

  constructor() {
    // The accounts' names are loaded once a chat has one selected or is in an account mode.
    effect(() => {
      if (this.account() || ['email', 'calendar'].includes(this.mode()))
        this.accounts.follow();
    });
  }

  private loadingModes = false;

  /** Asked for when the pointer or the focus reaches the chip, so the menu usually opens full-size. */
  protected loadModes(): void {
    if (this.modes().length || this.loadingModes) return;
    this.loadingModes = true;
    this.loadError.set(null);
    this.api.tools().subscribe({
      next: ({ modes }) => {
        this.loadingModes = false;
        this.modes.set(modes);
        // Opened while loading: placed for "Loading modes…"; place it again for the whole list.
        afterNextRender(() => this.trigger()?.updatePosition(), {
          injector: this.injector,
        });
      },
      error: (error: unknown) => {
        this.loadingModes = false;
        this.loadError.set(
          inlineErrorMessage(error, "Couldn't load the modes"),
        );
      },
    });
  }

  protected choose(mode: string): void {
    if (mode === this.mode() || this.switching()) return;
    this.switching.set(true);
    this.error.set(null);
    this.api.setChatMode(this.chatId(), mode).subscribe({
      next: (chat) => {
        this.switching.set(false);
        this.switched.emit(chat);
      },
      error: (error: unknown) => {
        this.switching.set(false);
        this.error.set(inlineErrorMessage(error, "Couldn't switch the mode"));
      },
    });
  }
}

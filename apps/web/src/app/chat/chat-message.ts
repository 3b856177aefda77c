import { RouterLink } from '@angular/router';
import {
  ChangeDetectionStrategy,
  Component,
  computed,
  input,
  output,
  signal,
} from '@angular/core';
import type {
  AssistantPart,
  PendingActionView,
  MessageAttachment,
  MessageAuthor,
  MessageDelivery,
  MessageTrigger,
  MessageVersions,
} from '@metatronos/shared-types';
import { Icon } from '../ui/icon';
import { CopyButton } from '../ui/copy-button';
import { OwnerTimePipe } from '../core/owner-time';
import { AttachmentList } from './attachment-list';
import { type MessageView, partsOf } from './live-reply';
import { modeSwitchText } from './mode-chip';
import { MarkdownView } from './markdown-view';
import { ThinkingIndicator } from './thinking-indicator';
import { ToolChip } from './tool-chip';
import { VersionSwitcher } from './version-switcher';
import { ActionItem } from '../actions/action-item';
import { taintText } from '../actions/action-words';
import type { ActionOutcome, ActionSettled } from '../actions/pending-actions';

/** A pending action shown under the reply whose turn proposed it, with what happened once settled here. */
export interface InlineAction {
  action: PendingActionView;
  outcome: ActionOutcome | null;
}

/** What the owner can do with a message: Retry a failed reply, Regenerate a reply, Edit an own message (each a new version). */
export type MessageAction = 'retry' | 'regenerate' | 'edit';

const ACTION_LABELS: Record<MessageAction, string> = {
  retry: 'Retry',
  regenerate: 'Regenerate',
  edit: 'Edit',
};

/** How a user message the scheduler wrote is labelled instead of "You said". */
export const TRIGGER_LABELS: Record<MessageTrigger, string> = {
  cron: 'Scheduled prompt',
  pulse: 'Pulse',
};

/** The model is being waited for: nothing arrived yet, or every tool it called has answered. */
export function awaitingModel(parts: readonly AssistantPart[]): boolean {
  const last = parts?.at(-1);
  return !last || (last.type === 'tool_call' && last.result !== null);
}

/** One message of a chat: the owner's text as typed, a contact's message under their name, or an assistant reply (Markdown and tool calls, in order). */
@Component({
  selector: 'mt-chat-message',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    AttachmentList,
    CopyButton,
    Icon,
    MarkdownView,
    OwnerTimePipe,
    ThinkingIndicator,
    ToolChip,
    ActionItem,
    RouterLink,
    VersionSwitcher,
  ],
  template: `
    @if (message().role === 'user') {
      <div
        class="bubble user"
        data-testid="user-message"
        [class.contact]="!!author()"
        [attr.data-message-id]="message().id"
        [attr.data-author]="author() ? 'contact' : 'owner'"
        [attr.title]="message().createdAt | ownerTime: 'full'"
      >
        @if (author(); as author) {
          <p class="author" data-testid="message-author">
            {{ author.name }}
            <span class="channel">on {{ channelLabel(author.channel) }}</span>
          </p>
          <span class="mt-visually-hidden">{{ author.name }} wrote:</span>
        } @else if (triggerLabel(); as label) {
          <p class="author trigger" data-testid="message-trigger">
            <mt-icon name="schedule" />{{ label }}
          </p>
        } @else {
          <span class="mt-visually-hidden">You said:</span>
        }
        @if (attachments().length) {
          <mt-attachment-list
            [attachments]="attachments()"
            data-testid="message-attachments"
          />
        }
        <p class="user-text" data-testid="user-text">{{ shownText() }}</p>
        @if (collapsed() !== null) {
          <button
            type="button"
            class="show-all"
            data-testid="message-show-all"
            [attr.aria-expanded]="showAll()"
            (click)="showAll.set(!showAll())"
          >
            {{
              showAll()
                ? 'Show less'
                : 'Show all (' +
                  message().content.length.toLocaleString('en') +
                  ' characters)'
            }}
          </button>
        }
      </div>
      @if (actions().length || versions()) {
        <div class="actions user-actions" [class.quiet]="quietActions()">
          @if (versions(); as versions) {
            <mt-version-switcher
              [versions]="versions"
              [disabled]="versionsDisabled()"
              (go)="switchVersion.emit($event)"
            />
          }
          @for (action of actions(); track action) {
            <button
              type="button"
              class="action"
              [attr.data-testid]="'message-' + action"
              (click)="act.emit(action)"
            >
              <mt-icon [name]="action === 'edit' ? 'edit' : 'refresh'" />{{
                actionLabels[action]
              }}
            </button>
          }
        </div>
      }
      @if (message().content) {
        <mt-copy-button
          class="copy-user"
          [class.contact]="!!author()"
          [text]="message().content"
          label="Copy message"
        />
      }
    } @else {
      <article
        class="reply"
        data-testid="assistant-message"
        [attr.data-message-id]="message().id"
        [attr.data-status]="message().status"
        [attr.aria-busy]="streaming()"
      >
        <span class="mt-visually-hidden">Metatron replied:</span>
        @for (part of parts(); track $index) {
          @if (part.type === 'text') {
            <mt-markdown [source]="part.text" />
          } @else if (part.type === 'mode') {
            <p class="mode-event" data-testid="mode-event">
              {{ modeSwitchText(part.mode, part.by) }}
            </p>
          } @else {
            <mt-tool-chip [call]="part" [settled]="!streaming()" />
          }
        }
        @for (item of inlineActions(); track item.action.id) {
          <mt-action-item
            [action]="item.action"
            [outcome]="item.outcome"
            [compact]="true"
            (settled)="actionSettled.emit($event)"
          />
        }
        @if (streaming() && waiting()) {
          <mt-thinking [since]="waitingSince() ?? sinceStored()" />
        }
        @if (message().status === 'error') {
          <p class="reply-error" role="alert" data-testid="assistant-error">
            {{ message().error || 'The reply failed.' }}
          </p>
        }
        @if (
          (!streaming() && message().createdAt) ||
          message().status === 'stopped' ||
          message().model ||
          message().delivery ||
          taint() ||
          copyableText()
        ) {
          <p class="meta">
            @if (!streaming() && message().createdAt) {
              <time
                data-testid="message-time"
                [attr.datetime]="message().createdAt"
                [attr.title]="message().createdAt | ownerTime: 'full'"
                >{{ message().createdAt | ownerTime }}</time
              >
            }
            @if (message().status === 'stopped') {
              <span class="stopped" data-testid="assistant-stopped"
                >stopped</span
              >
            }
            @if (message().model; as model) {
              <span data-testid="assistant-model">{{ model }}</span>
            }
            @if (message().delivery; as delivery) {
              <span
                class="delivery"
                data-testid="assistant-delivery"
                [attr.data-delivery]="delivery.status"
                [class.failed]="delivery.status === 'failed'"
              >
                {{ deliveryText(delivery) }}
              </span>
            }
            @if (taint(); as taint) {
              @if (chatId()) {
                <a
                  class="taint"
                  data-testid="assistant-taint"
                  routerLink="/instruction"
                  [queryParams]="{ chat: chatId() }"
                  [attr.aria-label]="
                    'This turn ' + taint + '. Show the prompt it now sends.'
                  "
                  [attr.title]="
                    'This turn ' + taint + '. Show the prompt it now sends.'
                  "
                  ><mt-icon name="public" />{{ taint }}</a
                >
              } @else {
                <span
                  class="taint"
                  data-testid="assistant-taint"
                  [attr.aria-label]="'This turn ' + taint"
                  [attr.title]="'This turn ' + taint"
                  ><mt-icon name="public" />{{ taint }}</span
                >
              }
            }
            @if (copyableText(); as text) {
              <mt-copy-button
                class="copy-reply"
                [text]="text"
                label="Copy reply"
              />
            }
          </p>
        }
        @if (actions().length || versions()) {
          <div class="actions" [class.quiet]="quietActions()">
            @if (versions(); as versions) {
              <mt-version-switcher
                [versions]="versions"
                [disabled]="versionsDisabled()"
                (go)="switchVersion.emit($event)"
              />
            }
            @for (action of actions(); track action) {
              <button
                type="button"
                class="action"
                [attr.data-testid]="'message-' + action"
                (click)="act.emit(action)"
              >
                <mt-icon [name]="action === 'edit' ? 'edit' : 'refresh'" />{{
                  actionLabels[action]
                }}
              </button>
            }
          </div>
        }
      </article>
    }
  `,
  styles: `
    :host {
      display: block;
    }
    .mode-event {
      margin: 4px 0;
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-label-medium);
      text-align: center;
    }
    .bubble.user {
      max-width: min(80%, 640px);
      margin-left: auto;
      padding: 10px 14px;
      border-radius: 18px 18px 4px 18px;
      background: var(--mat-sys-primary-container);
      color: var(--mat-sys-on-primary-container);
    }
    /* A contact's message: on the other side, in a neutral colour, with their name. */
    .bubble.user.contact {
      margin-left: 0;
      margin-right: auto;
      border-radius: 18px 18px 18px 4px;
      background: var(--mat-sys-surface-container-high);
      color: var(--mat-sys-on-surface);
    }
    .author {
      margin: 0 0 4px;
      font: var(--mat-sys-label-medium);
      font-weight: 600;
    }
    .author .channel {
      font-weight: 400;
      color: var(--mat-sys-on-surface-variant);
    }
    .user-text {
      margin: 0;
      white-space: pre-wrap;
      overflow-wrap: anywhere;
    }
    .show-all {
      margin: 6px 0 0;
      padding: 2px 0;
      border: 0;
      background: none;
      color: inherit;
      font: var(--mat-sys-label-large);
      text-decoration: underline;
      cursor: pointer;
    }
    .show-all:focus-visible {
      outline: 2px solid var(--mat-sys-primary);
      outline-offset: 2px;
    }
    .reply {
      max-width: 100%;
      min-width: 0;
    }
    .trigger {
      display: flex;
      align-items: center;
      gap: 4px;
      --mt-icon-size: 14px;
    }
    .actions {
      display: flex;
      flex-wrap: wrap;
      align-items: center;
      gap: 4px;
      margin: 4px 0 0;
    }
    /* With a mouse, Edit and Regenerate under older messages show on hover (always for touch and keyboard). */
    @media (hover: hover) {
      .actions.quiet .action {
        opacity: 0;
        transition: opacity 0.15s;
      }
      :host(:hover) .actions.quiet .action,
      .actions.quiet .action:focus-visible {
        opacity: 1;
      }
    }
    .user-actions {
      justify-content: flex-end;
    }
    .action {
      display: inline-flex;
      align-items: center;
      gap: 4px;
      min-height: 32px;
      padding: 2px 10px;
      border: 1px solid var(--mat-sys-outline-variant);
      border-radius: 16px;
      background: none;
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-label-medium);
      cursor: pointer;
      --mt-icon-size: 16px;
    }
    .action:hover {
      background: color-mix(in srgb, var(--mat-sys-on-surface) 6%, transparent);
      color: var(--mat-sys-on-surface);
    }
    .action:focus-visible {
      outline: 2px solid var(--mat-sys-primary);
      outline-offset: 2px;
    }
    .reply-error {
      margin: 8px 0 0;
      padding: 8px 12px;
      border-radius: var(--mat-sys-corner-small);
      background: var(--mat-sys-error-container);
      color: var(--mat-sys-on-error-container);
      font: var(--mat-sys-body-small);
    }
    .copy-user {
      display: flex;
      justify-content: flex-end;
      margin-top: 2px;
    }
    .copy-user.contact {
      justify-content: flex-start;
    }
    /* With a mouse, the copy button under a message shows on hover (always for touch and keyboard). */
    @media (hover: hover) {
      .copy-user {
        opacity: 0;
        transition: opacity 0.15s;
      }
      :host(:hover) .copy-user,
      .copy-user:focus-within {
        opacity: 1;
      }
    }
    .copy-reply {
      margin-left: -6px;
      order: -1;
    }
    .meta {
      display: flex;
      flex-wrap: wrap;
      align-items: center;
      gap: 8px;
      margin: 6px 0 0;
      font: var(--mat-sys-label-small);
      color: var(--mat-sys-on-surface-variant);
    }
    .taint {
      display: inline-flex;
      align-items: center;
      gap: 4px;
      color: inherit;
      --mt-icon-size: 14px;
    }
    .delivery.failed {
      color: var(--mat-sys-error);
    }
    .stopped {
      padding: 0 6px;
      border-radius: 4px;
      background: var(--mat-sys-surface-container-high);
    }
  `,
})
export class ChatMessageView {
  readonly message = input.required<
    MessageView & {
      attachments?: MessageAttachment[];
      author?: MessageAuthor | null;
      trigger?: MessageTrigger;
      updatedAt?: string;
      /** Stored messages; the reply still arriving has none yet. */
      createdAt?: string;
      versions?: MessageVersions;
    }
  >();
  /** The reply is still arriving: tool calls without a result are running, not cut off. */
  readonly streaming = input(false);
  /** The chat the message is in: its footer's mark links to that chat's prompt preview. */
  readonly chatId = input<string | null>(null);
  /** Since when the model is being waited for (the last event of the live reply); default: the message's last update. */
  readonly waitingSince = input<number | null>(null);
  /** The buttons under the message. */
  readonly actions = input<readonly MessageAction[]>([]);
  readonly act = output<MessageAction>();
  /** The version (1-based) the owner asked to see, from "← n/m →". */
  readonly switchVersion = output<number>();
  /** The buttons show on hover only (with a mouse): every message but the latest exchange has them. */
  readonly quietActions = input(false);
  /** A reply runs or a switch is under way: the version arrows wait. */
  readonly versionsDisabled = input(false);
  protected readonly versions = computed(() => {
    const versions = this.message().versions;
    return versions && versions.count > 1 ? versions : null;
  });
  /** The tool calls of this reply's turn that wait for the owner (or were just approved or discarded here). */
  readonly inlineActions = input<readonly InlineAction[]>([]);
  readonly actionSettled = output<ActionSettled>();
  /** What brought third-party content into the turn, in words; null when nothing did. */
  protected readonly taint = computed(() => {
    const marks = this.message().taint;
    return marks?.length ? taintText(marks) : null;
  });

  protected readonly actionLabels = ACTION_LABELS;
  protected readonly waiting = computed(() => awaitingModel(this.parts()));
  protected readonly sinceStored = computed(() => {
    const at = Date.parse(this.message().updatedAt ?? '');
    return Number.isNaN(at) ? Date.now() : at;
  });
  protected readonly triggerLabel = computed(() => {
    const message = this.message();
    return message.role === 'user' && message.trigger
      ? TRIGGER_LABELS[message.trigger]
      : null;
  });

  protected readonly parts = computed(() => partsOf(this.message()));
  /** A long message (a pasted document) shows its start until "Show all". */
  protected readonly showAll = signal(false);
  protected readonly collapsed = computed(() =>
    this.message().role === 'user'
      ? collapsedText(this.message().content)
      : null,
  );
  protected readonly shownText = computed(() => {
    const collapsed = this.collapsed();
    return collapsed !== null && !this.showAll()
      ? collapsed
      : this.message().content;
  });
  protected readonly modeSwitchText = modeSwitchText;
  /** The contact who wrote a user message; null for the owner's own. */
  protected channelLabel(channel: MessageAuthor['channel']): string {
    return channel === 'telegram' ? 'Telegram' : 'WhatsApp';
  }
  protected readonly author = computed(() =>
    this.message().role === 'user' ? (this.message().author ?? null) : null,
  );
  protected readonly attachments = computed(
    () => this.message().attachments ?? [],
  );
  protected readonly deliveryText = deliveryText;
  /** The reply's text (its Markdown) for the Copy button, once it has finished arriving. */
  protected readonly copyableText = computed(() => {
    if (this.streaming() || this.message().role === 'user') return '';
    return this.parts()
      .flatMap((part) => (part.type === 'text' ? [part.text] : []))
      .join('\n\n')
      .trim();
  });
}

/** Longer messages are shown collapsed: at most this many characters… */
export const COLLAPSED_CHARS = 1500;
/** …and this many lines. */
export const COLLAPSED_LINES = 24;

/** The start of a message too long to show whole (ending in "…"), or null when it is short enough. */
export function collapsedText(content: string): string | null {
  const lines = content.split('\n');
  if (
    content.length <= COLLAPSED_CHARS * 2 &&
    lines.length <= COLLAPSED_LINES * 2
  )
    return null;
  const head = lines.slice(0, COLLAPSED_LINES).join('\n');
  return `${head.slice(0, COLLAPSED_CHARS).trimEnd()}…`;
}

/** Whether an auto-reply went out on WhatsApp, in words. */
export function deliveryText({ status, detail }: MessageDelivery): string {
  if (status === 'sent') return 'Sent on WhatsApp';
  const why = detail ? `: ${detail.replace(/\.$/, '')}` : '';
  return status === 'failed'
    ? `Couldn't send on WhatsApp${why}`
    : `Not sent on WhatsApp${why}`;
}

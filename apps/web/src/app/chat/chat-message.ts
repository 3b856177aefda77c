import {
  ChangeDetectionStrategy,
  Component,
  computed,
  input,
} from '@angular/core';
import type {
  MessageAttachment,
  MessageAuthor,
  MessageDelivery,
} from '@metatronos/shared-types';
import { OwnerTimePipe } from '../core/owner-time';
import { AttachmentList } from './attachment-list';
import { type MessageView, partsOf } from './live-reply';
import { MarkdownView } from './markdown-view';
import { ToolChip } from './tool-chip';

/** One message of a chat: the owner's text as typed, a contact's message under their name, or an assistant reply (Markdown and tool calls, in order). */
@Component({
  selector: 'mt-chat-message',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [AttachmentList, MarkdownView, ToolChip, OwnerTimePipe],
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
            {{ author.name }} <span class="channel">on WhatsApp</span>
          </p>
          <span class="mt-visually-hidden">{{ author.name }} wrote:</span>
        } @else {
          <span class="mt-visually-hidden">You said:</span>
        }
        @if (attachments().length) {
          <mt-attachment-list
            [attachments]="attachments()"
            data-testid="message-attachments"
          />
        }
        <p class="user-text">{{ message().content }}</p>
      </div>
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
          } @else {
            <mt-tool-chip [call]="part" [settled]="!streaming()" />
          }
        }
        @if (streaming() && parts().length === 0) {
          <p class="thinking" data-testid="assistant-thinking">
            <span class="dot"></span><span class="dot"></span
            ><span class="dot"></span>
            <span class="mt-visually-hidden">Metatron is thinking</span>
          </p>
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
          message().delivery
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
          </p>
        }
      </article>
    }
  `,
  styles: `
    :host {
      display: block;
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
    .reply {
      max-width: 100%;
      min-width: 0;
    }
    .thinking {
      display: flex;
      gap: 4px;
      margin: 6px 0;
    }
    .dot {
      width: 8px;
      height: 8px;
      border-radius: 50%;
      background: var(--mat-sys-on-surface-variant);
      animation: mt-blink 1.2s infinite ease-in-out both;
    }
    .dot:nth-child(2) {
      animation-delay: 0.2s;
    }
    .dot:nth-child(3) {
      animation-delay: 0.4s;
    }
    .reply-error {
      margin: 8px 0 0;
      padding: 8px 12px;
      border-radius: var(--mat-sys-corner-small);
      background: var(--mat-sys-error-container);
      color: var(--mat-sys-on-error-container);
      font: var(--mat-sys-body-small);
    }
    .meta {
      display: flex;
      gap: 8px;
      margin: 6px 0 0;
      font: var(--mat-sys-label-small);
      color: var(--mat-sys-on-surface-variant);
    }
    .delivery.failed {
      color: var(--mat-sys-error);
    }
    .stopped {
      padding: 0 6px;
      border-radius: 4px;
      background: var(--mat-sys-surface-container-high);
    }
    @keyframes mt-blink {
      0%,
      80%,
      100% {
        opacity: 0.25;
      }
      40% {
        opacity: 1;
      }
    }
  `,
})
export class ChatMessageView {
  readonly message = input.required<
    MessageView & {
      attachments?: MessageAttachment[];
      author?: MessageAuthor | null;
      /** Stored messages; the reply still arriving has none yet. */
      createdAt?: string;
    }
  >();
  /** The reply is still arriving: tool calls without a result are running, not cut off. */
  readonly streaming = input(false);

  protected readonly parts = computed(() => partsOf(this.message()));
  /** The contact who wrote a user message; null for the owner's own. */
  protected readonly author = computed(() =>
    this.message().role === 'user' ? (this.message().author ?? null) : null,
  );
  protected readonly attachments = computed(
    () => this.message().attachments ?? [],
  );
  protected readonly deliveryText = deliveryText;
}

/** Whether an auto-reply went out on WhatsApp, in words. */
export function deliveryText({ status, detail }: MessageDelivery): string {
  if (status === 'sent') return 'Sent on WhatsApp';
  const why = detail ? `: ${detail.replace(/\.$/, '')}` : '';
  return status === 'failed'
    ? `Couldn't send on WhatsApp${why}`
    : `Not sent on WhatsApp${why}`;
}

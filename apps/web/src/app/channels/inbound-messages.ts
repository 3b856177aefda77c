import {
  ChangeDetectionStrategy,
  Component,
  input,
  output,
} from '@angular/core';
import { DatePipe } from '@angular/common';
import { MatButton } from '@angular/material/button';

/** One received message as both channel cards list it (Telegram and WhatsApp look and behave the same). */
export interface InboundItem {
  id: string;
  /** What a permission is keyed by: the Telegram chat id, the WhatsApp phone digits. */
  key: string;
  sender: string;
  /** The group the message came from, when it did. */
  where: string | null;
  text: string;
  at: string;
  processing: string;
  reason: string | null;
  permitted: boolean;
  /** The auto-reply's answer, once there is one. */
  reply: string | null;
}

/** The auto-reply's progress in words. */
export function processingLabel(message: InboundItem): string {
  if (!message.permitted) return 'Not allowed: no reply';
  switch (message.processing) {
    case 'done':
      return 'Answered';
    case 'pending':
    case 'working':
      return 'Answering…';
    case 'skipped':
      return message.reason ? `Skipped: ${message.reason}` : 'Skipped';
    case 'stale':
      return 'Too old to answer';
    default:
      return message.reason ? `Failed: ${message.reason}` : 'Failed';
  }
}

/**
 * A channel's latest messages: each with the auto-reply's state and answer as they change (the
 * card reloads on the server's events), a stranger with "Allow".
 */
@Component({
  selector: 'mt-inbound-messages',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [DatePipe, MatButton],
  template: `
    <ul class="messages" [attr.data-testid]="channel() + '-messages'">
      @for (message of messages(); track message.id) {
        <li
          class="message"
          [class.stranger]="!message.permitted"
          [attr.data-message-id]="message.id"
        >
          <div class="who">
            <span class="name">{{ message.sender }}</span>
            @if (message.where) {
              <span class="meta">in {{ message.where }}</span>
            }
            <time class="meta" [attr.datetime]="message.at">{{
              message.at | date: 'MMM d, HH:mm'
            }}</time>
          </div>
          <p class="text">{{ message.text }}</p>
          @if (message.reply) {
            <p
              class="text reply"
              [attr.data-testid]="channel() + '-message-reply'"
            >
              <span class="meta">Metatron:</span> {{ message.reply }}
            </p>
          }
          <div class="message-footer">
            <span
              class="meta"
              [attr.data-testid]="channel() + '-message-state'"
              >{{ label(message) }}</span
            >
            @if (!message.permitted) {
              <button
                mat-stroked-button
                type="button"
                [attr.data-testid]="channel() + '-allow'"
                [attr.aria-label]="'Allow ' + message.sender"
                [disabled]="busyKey() === message.key"
                (click)="allow.emit(message)"
              >
                Allow
              </button>
            }
          </div>
        </li>
      }
    </ul>
  `,
  styles: `
    .messages {
      list-style: none;
      margin: 0;
      padding: 0;
      display: grid;
      gap: 8px;
    }
    .message {
      border: 1px solid var(--mat-sys-outline-variant);
      border-radius: 12px;
      padding: 8px 12px;
    }
    .message.stranger {
      border-style: dashed;
    }
    .who {
      display: flex;
      flex-wrap: wrap;
      align-items: baseline;
      gap: 8px;
    }
    .name {
      font: var(--mat-sys-title-small);
    }
    .meta {
      color: var(--mat-sys-on-surface-variant);
      font: var(--mat-sys-body-small);
    }
    .text {
      margin: 4px 0;
      white-space: pre-wrap;
      overflow-wrap: anywhere;
    }
    .reply {
      padding-left: 8px;
      border-left: 3px solid var(--mat-sys-outline-variant);
    }
    .message-footer {
      display: flex;
      align-items: center;
      justify-content: space-between;
      gap: 8px;
    }
  `,
})
export class InboundMessages {
  /** `telegram` or `whatsapp`: names the test ids. */
  readonly channel = input.required<string>();
  readonly messages = input.required<readonly InboundItem[]>();
  /** The key whose Allow is under way. */
  readonly busyKey = input<string | null>(null);
  readonly allow = output<InboundItem>();

  protected readonly label = processingLabel;
}

import {
  ChangeDetectionStrategy,
  Component,
  ElementRef,
  Injector,
  afterNextRender,
  inject,
  input,
  output,
  signal,
  viewChild,
} from '@angular/core';
import { MatButton, MatIconButton } from '@angular/material/button';
import { RouterLink } from '@angular/router';
import {
  CHAT_TITLE_MAX_LENGTH,
  type ChatKind,
  type ChatSummary,
} from '@metatronos/shared-types';
import { Icon } from '../ui/icon';

export interface ChatRename {
  chat: ChatSummary;
  title: string;
}

/** Short "when" for a chat: the time today, the date otherwise. */
export function formatChatTime(iso: string, now = new Date()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const sameDay = date.toDateString() === now.toDateString();
  return sameDay
    ? date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
    : date.toLocaleDateString(undefined, {
        month: 'short',
        day: 'numeric',
        ...(date.getFullYear() !== now.getFullYear()
          ? { year: 'numeric' }
          : {}),
      });
}

/** The chats, newest first, each with inline rename and a confirmed delete. The page does the API calls. */
/** The badge of chats the owner did not start (none for the owner's own). */
const KIND_LABELS: Record<ChatKind, string> = {
  chat: '',
  cron: 'Job',
  pulse: 'Pulse',
  whatsapp: 'WhatsApp',
  telegram: 'Telegram',
};

@Component({
  selector: 'mt-chat-list',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [RouterLink, MatButton, MatIconButton, Icon],
  templateUrl: './chat-list.html',
  styleUrl: './chat-list.scss',
})
export class ChatList {
  private readonly injector = inject(Injector);
  private readonly host: ElementRef<HTMLElement> = inject(ElementRef);
  private readonly titleInput =
    viewChild<ElementRef<HTMLInputElement>>('titleInput');

  readonly chats = input.required<ChatSummary[]>();
  readonly activeId = input<string | null>(null);
  /** Ids of chats with a rename or delete under way. */
  readonly pendingIds = input<ReadonlySet<string>>(new Set());
  readonly renamed = output<ChatRename>();
  readonly deleted = output<ChatSummary>();

  protected readonly titleMaxLength = CHAT_TITLE_MAX_LENGTH;
  protected readonly renamingId = signal<string | null>(null);
  protected readonly confirmingId = signal<string | null>(null);
  protected readonly formatTime = formatChatTime;

  /** Chats the owner did not start say what runs in them. */
  protected kindLabel(chat: ChatSummary): string {
    return KIND_LABELS[chat.kind];
  }

  protected startRename(chat: ChatSummary): void {
    this.confirmingId.set(null);
    this.renamingId.set(chat.id);
    afterNextRender(
      () => {
        const input = this.titleInput()?.nativeElement;
        input?.focus();
        input?.select();
      },
      { injector: this.injector },
    );
  }

  /** Enter or leaving the field saves; an empty or unchanged title changes nothing. */
  protected commitRename(chat: ChatSummary, value: string): void {
    if (this.renamingId() !== chat.id) return;
    this.renamingId.set(null);
    const title = value.trim();
    if (title && title !== chat.title) this.renamed.emit({ chat, title });
    this.focusRow(chat.id, 'rename-chat');
  }

  protected cancelRename(chat: ChatSummary): void {
    this.renamingId.set(null);
    this.focusRow(chat.id, 'rename-chat');
  }

  protected askDelete(chat: ChatSummary): void {
    this.renamingId.set(null);
    this.confirmingId.set(chat.id);
    this.focusRow(chat.id, 'cancel-delete-chat');
  }

  protected confirmDelete(chat: ChatSummary): void {
    this.confirmingId.set(null);
    this.deleted.emit(chat);
  }

  protected cancelDelete(chat: ChatSummary): void {
    this.confirmingId.set(null);
    this.focusRow(chat.id, 'delete-chat');
  }

  private focusRow(chatId: string, testId: string): void {
    afterNextRender(
      () => {
        const rows = this.host.nativeElement.querySelectorAll<HTMLElement>(
          '[data-testid="chat-item"]',
        );
        const row = Array.from(rows).find(
          (element) => element.dataset['chatId'] === chatId,
        );
        row?.querySelector<HTMLElement>(`[data-testid="${testId}"]`)?.focus();
      },
      { injector: this.injector },
    );
  }
}

import { highlightParts } from './highlight';
import {
  ChangeDetectionStrategy,
  Component,
  ElementRef,
  Injector,
  afterNextRender,
  computed,
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
import {
  MatMenu,
  MatMenuContent,
  MatMenuItem,
  MatMenuTrigger,
} from '@angular/material/menu';
import { OwnerTimePipe } from '../core/owner-time';
import { Icon } from '../ui/icon';

export interface ChatRename {
  chat: ChatSummary;
  title: string;
}

/** The list's groups, in order: the owner's conversations, then what runs by itself. */
export const CHAT_GROUPS: ReadonlyArray<{
  kind: ChatKind;
  label: string;
  /** The chat kinds in the group (contacts: every channel). */
  kinds: readonly ChatKind[];
}> = [
  { kind: 'chat', label: 'Conversations', kinds: ['chat'] },
  { kind: 'cron', label: 'Jobs', kinds: ['cron'] },
  { kind: 'pulse', label: 'Pulse', kinds: ['pulse'] },
  { kind: 'whatsapp', label: 'Contacts', kinds: ['whatsapp', 'telegram'] },
];

export interface ChatGroup {
  kind: ChatKind;
  label: string;
  kinds: readonly ChatKind[];
  chats: ChatSummary[];
}

/** The chats by kind, each group keeping the list's order (pinned first); empty groups left out. */
export function groupChats(chats: ChatSummary[]): ChatGroup[] {
  return CHAT_GROUPS.map((group) => ({
    ...group,
    chats: chats.filter((chat) => group.kinds.includes(chat.kind)),
  })).filter((group) => group.chats.length > 0);
}

/** A job chat's title under the Jobs heading: "Job: Morning briefing" → "Morning briefing". */
export function titleInGroup(
  chat: Pick<ChatSummary, 'kind' | 'title'>,
): string {
  const bare = chat.kind === 'cron' ? chat.title.replace(/^Job:\s*/, '') : '';
  return bare || chat.title;
}

/** A pin or archive switch asked from the list. */
export interface ChatFlagChange {
  chat: ChatSummary;
  change: { pinned: boolean } | { archived: boolean };
}

/** The chats in groups (conversations, jobs, Pulse, contacts), each with pin, archive, inline rename and a confirmed delete. The page does the API calls. */
@Component({
  selector: 'mt-chat-list',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    RouterLink,
    MatButton,
    MatIconButton,
    MatMenu,
    MatMenuContent,
    MatMenuItem,
    MatMenuTrigger,
    Icon,
    OwnerTimePipe,
  ],
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
  /** The search the list answers: its matches are marked in the snippets. */
  readonly search = input('');
  /** Ids of chats with a rename or delete under way. */
  readonly pendingIds = input<ReadonlySet<string>>(new Set());
  readonly renamed = output<ChatRename>();
  readonly deleted = output<ChatSummary>();
  readonly flagged = output<ChatFlagChange>();

  protected readonly titleMaxLength = CHAT_TITLE_MAX_LENGTH;
  protected readonly highlight = highlightParts;
  protected readonly renamingId = signal<string | null>(null);
  protected readonly confirmingId = signal<string | null>(null);
  protected readonly groups = computed(() => groupChats(this.chats()));
  /** One group needs no heading. */
  protected readonly showHeadings = computed(() => this.groups().length > 1);

  /** Under the Jobs heading, a job's chat is named without the "Job:" it carries elsewhere. */
  protected listTitle(chat: ChatSummary): string {
    return this.showHeadings() ? titleInGroup(chat) : chat.title;
  }

  protected togglePin(chat: ChatSummary): void {
    this.flagged.emit({ chat, change: { pinned: !chat.pinned } });
  }

  protected toggleArchive(chat: ChatSummary): void {
    this.flagged.emit({ chat, change: { archived: !chat.archived } });
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
        // On a narrow screen that button is hidden: the row's menu button takes the focus.
        if (!row?.contains(document.activeElement))
          row
            ?.querySelector<HTMLElement>('[data-testid="chat-actions-menu"]')
            ?.focus();
      },
      { injector: this.injector },
    );
  }
}

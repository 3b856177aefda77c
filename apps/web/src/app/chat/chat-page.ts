import {
  ChangeDetectionStrategy,
  Component,
  computed,
  inject,
  input,
  signal,
} from '@angular/core';
import { MatButton } from '@angular/material/button';
import { MatProgressBar } from '@angular/material/progress-bar';
import { Router } from '@angular/router';
import type { ChatSummary } from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { liveResource } from '../core/live-resource';
import { errorStatus, inlineErrorMessage } from '../core/server-problem';
import { Icon } from '../ui/icon';
import { ServerError } from '../ui/server-error';
import { ChatList, type ChatFlagChange, type ChatRename } from './chat-list';
import { ChatModelPicker } from './chat-model-picker';
import { DRAFT_CHAT_ID } from './chat-stream';
import { ChatThread } from './chat-thread';

/** How long typing pauses before the search runs. */
const SEARCH_DELAY_MS = 250;

/** `/chat` and `/chat/:id`: the chats on the left, the open one on the right. */
@Component({
  selector: 'mt-chat-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatProgressBar,
    Icon,
    ServerError,
    ChatList,
    ChatThread,
    ChatModelPicker,
  ],
  templateUrl: './chat-page.html',
  styleUrl: './chat-page.scss',
})
export class ChatPage {
  private readonly api = inject(ApiClient);
  private readonly router = inject(Router);

  /** Route parameter: the open chat, undefined on `/chat`. */
  readonly id = input<string>();

  protected readonly chats = signal<ChatSummary[]>([]);
  protected readonly loaded = signal(false);
  protected readonly actionError = signal<string | null>(null);
  protected readonly pendingIds = signal<ReadonlySet<string>>(new Set());

  /** The search box as typed, and the search the list shows. */
  protected readonly searchText = signal('');
  protected readonly search = signal('');
  /** The archived chats instead of the others. */
  protected readonly archivedView = signal(false);
  private searchTimer: ReturnType<typeof setTimeout> | null = null;

  protected readonly activeId = computed(() => this.id() ?? null);
  /** The open chat was deleted in another tab or window: its thread is gone and a notice says so. */
  protected readonly deletedElsewhere = signal<{
    id: string;
    title: string | null;
  } | null>(null);
  /** The notice stays on the empty page it leads to, until another chat opens. */
  protected readonly deletedNotice = computed(() => {
    const gone = this.deletedElsewhere();
    const open = this.activeId();
    return gone && (open === null || open === gone.id) ? gone : null;
  });
  protected readonly draft = computed(() => this.id() === DRAFT_CHAT_ID);
  /** The open chat; found by id in the list, which may not hold it (a search, the other view). */
  private readonly openedChat = signal<ChatSummary | null>(null);
  protected readonly activeChat = computed(
    () =>
      this.chats().find((chat) => chat.id === this.id()) ??
      (this.openedChat()?.id === this.id() ? this.openedChat() : null),
  );

  private readonly live = liveResource({
    load: () =>
      this.api.chats({
        q: this.search() || undefined,
        archived: this.archivedView() || undefined,
      }),
    apply: (chats) => {
      // A search may hide the open chat: its header and model picker keep the last view of it.
      const open = this.activeChat();
      if (open && !chats.some((chat) => chat.id === open.id))
        this.openedChat.set(open);
      this.chats.set(chats);
      this.loaded.set(true);
    },
    hasValue: this.loaded,
    failure: "Couldn't load your chats",
    event: {
      name: 'chats.changed',
      // Whether an auto-reply went out on WhatsApp shows in the thread, not in the list.
      affects: (event) => event.change !== 'delivery',
      seen: (event) => {
        if (event.change !== 'deleted' || event.chatId !== this.id()) return;
        // Deleted here: remove() leaves it itself. Deleted elsewhere: the thread goes at once (its message box
        // would send into nothing) and a notice says why.
        if (!this.pendingIds().has(event.chatId)) {
          this.deletedElsewhere.set({
            id: event.chatId,
            title: this.activeChat()?.title ?? null,
          });
        }
        void this.router.navigate(['/chat']);
      },
    },
  });
  protected readonly loading = this.live.loading;
  protected readonly loadProblem = this.live.problem;
  protected readonly refresh = this.live.reload;

  /** A draft: nothing is stored until its first message is sent. */
  protected newChat(): void {
    this.actionError.set(null);
    void this.router.navigate(['/chat', DRAFT_CHAT_ID]);
  }

  /** The draft's first message was stored: the chat has its id now. */
  protected chatStarted(chatId: string): void {
    void this.router.navigate(['/chat', chatId], { replaceUrl: true });
    // The server's `created` event reloads the list; a search or the archived view would not show the chat.
    if (this.archivedView() || this.search()) this.showAll();
  }

  protected onSearch(text: string): void {
    this.searchText.set(text);
    if (this.searchTimer) clearTimeout(this.searchTimer);
    this.searchTimer = setTimeout(() => {
      this.searchTimer = null;
      const next = text.trim();
      if (next === this.search()) return;
      this.search.set(next);
      this.refresh();
    }, SEARCH_DELAY_MS);
  }

  protected clearSearch(): void {
    if (this.searchTimer) clearTimeout(this.searchTimer);
    this.searchText.set('');
    if (!this.search()) return;
    this.search.set('');
    this.refresh();
  }

  protected toggleArchived(): void {
    this.archivedView.update((archived) => !archived);
    this.refresh();
  }

  private showAll(): void {
    this.searchText.set('');
    this.search.set('');
    this.archivedView.set(false);
    this.refresh();
  }

  /** Pin or archive: shown at once, put back if the server refuses. */
  protected flag({ chat, change }: ChatFlagChange): void {
    this.actionError.set(null);
    this.setPending(chat.id, true);
    const leaves = 'archived' in change;
    if (leaves && this.id() === chat.id) this.openedChat.set(chat);
    this.api.updateChat(chat.id, change).subscribe({
      next: (updated) => {
        this.setPending(chat.id, false);
        if (this.id() === chat.id) this.openedChat.set(updated);
        // Archiving moves the chat to the other view; pinning moves it within this one.
        if (leaves)
          this.chats.update((chats) => chats.filter((c) => c.id !== chat.id));
        else this.refresh();
      },
      error: (error: unknown) => {
        this.setPending(chat.id, false);
        this.actionError.set(
          inlineErrorMessage(
            error,
            `Couldn't ${'pinned' in change ? (change.pinned ? 'pin' : 'unpin') : change.archived ? 'archive' : 'unarchive'} “${chat.title}”.`,
          ),
        );
      },
    });
  }

  /** The model picker saved the chat's model. */
  protected modelChanged(chat: ChatSummary): void {
    this.openedChat.set(chat);
    this.replaceChat(chat);
  }

  protected rename({ chat, title }: ChatRename): void {
    this.actionError.set(null);
    this.setPending(chat.id, true);
    // Show the new title at once; the server's answer (or the old title on failure) follows.
    this.replaceChat({ ...chat, title });
    this.api.renameChat(chat.id, title).subscribe({
      next: (updated) => {
        this.setPending(chat.id, false);
        this.replaceChat(updated);
      },
      error: (error: unknown) => {
        this.setPending(chat.id, false);
        this.replaceChat(chat);
        this.actionError.set(
          inlineErrorMessage(error, `Couldn't rename “${chat.title}”.`),
        );
      },
    });
  }

  protected remove(chat: ChatSummary): void {
    this.actionError.set(null);
    this.setPending(chat.id, true);
    this.api.deleteChat(chat.id).subscribe({
      next: () => this.forget(chat.id),
      error: (error: unknown) => {
        // Already gone is as good as deleted.
        if (errorStatus(error) === 404) {
          this.forget(chat.id);
          return;
        }
        this.setPending(chat.id, false);
        this.actionError.set(
          inlineErrorMessage(error, `Couldn't delete “${chat.title}”.`),
        );
      },
    });
  }

  private forget(chatId: string): void {
    this.setPending(chatId, false);
    this.chats.update((chats) => chats.filter((chat) => chat.id !== chatId));
    if (this.id() === chatId) void this.router.navigate(['/chat']);
  }

  private replaceChat(chat: ChatSummary): void {
    this.chats.update((chats) =>
      chats.map((other) => (other.id === chat.id ? chat : other)),
    );
  }

  private setPending(chatId: string, pending: boolean): void {
    this.pendingIds.update((ids) => {
      const next = new Set(ids);
      if (pending) next.add(chatId);
      else next.delete(chatId);
      return next;
    });
  }
}

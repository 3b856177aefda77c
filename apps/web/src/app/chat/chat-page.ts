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
import { ChatList, type ChatRename } from './chat-list';
import { ChatThread } from './chat-thread';

/** `/chat` and `/chat/:id`: the chats on the left, the open one on the right. */
@Component({
  selector: 'mt-chat-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatButton, MatProgressBar, Icon, ServerError, ChatList, ChatThread],
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
  protected readonly creating = signal(false);
  protected readonly pendingIds = signal<ReadonlySet<string>>(new Set());

  protected readonly activeId = computed(() => this.id() ?? null);
  protected readonly activeChat = computed(
    () => this.chats().find((chat) => chat.id === this.id()) ?? null,
  );

  private readonly live = liveResource({
    load: () => this.api.chats(),
    apply: (chats) => {
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
        if (event.change === 'deleted' && event.chatId === this.id())
          void this.router.navigate(['/chat']);
      },
    },
  });
  protected readonly loading = this.live.loading;
  protected readonly loadProblem = this.live.problem;
  protected readonly refresh = this.live.reload;

  protected newChat(): void {
    if (this.creating()) return;
    this.creating.set(true);
    this.actionError.set(null);
    this.api.createChat({}).subscribe({
      next: (chat) => {
        this.creating.set(false);
        this.chats.update((chats) => [
          chat,
          ...chats.filter((other) => other.id !== chat.id),
        ]);
        void this.router.navigate(['/chat', chat.id]);
      },
      error: (error: unknown) => {
        this.creating.set(false);
        this.actionError.set(
          inlineErrorMessage(error, "Couldn't create a chat."),
        );
      },
    });
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

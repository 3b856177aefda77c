import {
  ChangeDetectionStrategy,
  Component,
  DestroyRef,
  type ElementRef,
  Injector,
  afterNextRender,
  afterRenderEffect,
  computed,
  effect,
  inject,
  input,
  linkedSignal,
  output,
  signal,
  untracked,
  viewChild,
} from '@angular/core';
import { BreakpointObserver } from '@angular/cdk/layout';
import {
  takeUntilDestroyed,
  toObservable,
  toSignal,
} from '@angular/core/rxjs-interop';
import { MatButton, MatIconButton } from '@angular/material/button';
import { MatProgressBar } from '@angular/material/progress-bar';
import { MatSlideToggle } from '@angular/material/slide-toggle';
import { ActivatedRoute, RouterLink } from '@angular/router';
import { type Observable, type Subscription, filter, map, skip } from 'rxjs';
import {
  ATTACHMENT_ACCEPT,
  type ChatKind,
  type ChatMessage,
  MESSAGE_MAX_LENGTH,
  type RegenerateReplyRequest,
  type SendMessageRequest,
} from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { EventStream } from '../core/event-stream';
import {
  type ServerProblem,
  errorStatus,
  inlineErrorMessage,
  pageProblem,
} from '../core/server-problem';
import { ServerStatus } from '../core/server-status';
import { Icon } from '../ui/icon';
import { ServerError } from '../ui/server-error';
import {
  AttachmentUploads,
  asMessageAttachments,
  carriesFiles,
  formatBytes,
} from './attachment-uploads';
import { ModeChip } from './mode-chip';
import {
  ChatMessageView,
  type InlineAction,
  type MessageAction,
} from './chat-message';
import { ActionItem } from '../actions/action-item';
import { type ActionSettled, PendingActions } from '../actions/pending-actions';
import { VoiceCallBar } from './voice-call-bar';
import {
  ChatSendError,
  ChatStream,
  DRAFT_CHAT_ID,
  type ChatStreamEvent,
} from './chat-stream';
import {
  type LiveReply,
  NEW_REPLY,
  applyReplyEvent,
  liveReplyView,
} from './live-reply';
import {
  LOCAL_ID_PREFIX,
  MESSAGE_PAGE_SIZE,
  isLocalMessage,
  mergeLatestPage,
  prependPage,
} from './message-pages';

/** The name a too-long text gets when it goes as a file. */
export const PASTED_TEXT_FILE_NAME = 'pasted-text.txt';

/** How long a message opened by its link stays highlighted. */
const HIGHLIGHT_MS = 2500;

/** Within this many pixels of the bottom, new text keeps the view scrolled to the end. */
const STICKY_BOTTOM_PX = 48;

/** An error that mentions the settings (e.g. "No model configured") gets a link there. */
export function mentionsSettings(message: string): boolean {
  return /settings?\b/i.test(message);
}

/** The open chat: its messages (paged), the reply streaming in, and the composer. */
/** Below this width the full composer hint wraps (a 390-pixel phone shows about 40 characters). */
export const NARROW_COMPOSER_QUERY = '(max-width: 599.98px)';

@Component({
  selector: 'mt-chat-thread',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatIconButton,
    MatProgressBar,
    MatSlideToggle,
    RouterLink,
    Icon,
    ServerError,
    ChatMessageView,
    ModeChip,
    ActionItem,
    VoiceCallBar,
  ],
  templateUrl: './chat-thread.html',
  styleUrl: './chat-thread.scss',
  host: {
    '[class.dragging]': 'dragging()',
    '(dragenter)': 'onDragEnter($event)',
    '(dragover)': 'onDragOver($event)',
    '(dragleave)': 'onDragLeave($event)',
    '(drop)': 'onDrop($event)',
  },
})
export class ChatThread {
  private readonly api = inject(ApiClient);
  private readonly chatStream = inject(ChatStream);
  private readonly injector = inject(Injector);
  private readonly scroller = viewChild<ElementRef<HTMLElement>>('scroller');
  private readonly composer =
    viewChild<ElementRef<HTMLTextAreaElement>>('composer');
  private readonly editBox =
    viewChild<ElementRef<HTMLTextAreaElement>>('editBox');

  readonly chatId = input.required<string>();
  readonly chatTitle = input('');
  /** A contact's chat (`whatsapp`) offers the full-tools switch. */
  readonly chatKind = input<ChatKind>('chat');
  /** The chat list says a reply is being generated in this chat. */
  readonly running = input(false);
  /** The conversation's mode (which tools its turns get), shown and switched by the chip. */
  readonly chatMode = input('default');
  readonly chatAccount = input<string | null>(null);
  /** A reply this page sent or stopped has ended: the chat list may have changed (title, running). */
  readonly replyFinished = output<void>();
  /** The draft chat's first message was stored: the server's id of the chat now. */
  readonly chatStarted = output<string>();

  protected readonly maxLength = MESSAGE_MAX_LENGTH;
  protected readonly accept = ATTACHMENT_ACCEPT;
  protected readonly formatBytes = formatBytes;
  /** Files picked (or dropped) for the next message, uploading as soon as they are picked. */
  protected readonly uploads = new AttachmentUploads(this.api);
  /** Files are being dragged over the thread. */
  protected readonly dragging = signal(false);
  private dragDepth = 0;
  protected readonly messages = signal<ChatMessage[]>([]);
  protected readonly loading = signal(true);
  protected readonly loadProblem = signal<ServerProblem | null>(null);
  protected readonly notFound = signal(false);
  protected readonly hasEarlier = signal(false);
  protected readonly loadingEarlier = signal(false);
  protected readonly earlierError = signal<string | null>(null);
  protected readonly live = signal<LiveReply | null>(null);
  protected readonly sending = signal(false);
  protected readonly sendError = signal<string | null>(null);
  /** The message whose reply a spend cap stopped: "Allow this one reply" sends it again over the cap. */
  protected readonly overBudgetContent = signal<string | null>(null);
  private lastSentContent = '';
  protected readonly stopping = signal(false);
  protected readonly draft = signal('');
  protected readonly awayFromBottom = signal(false);
  /** In a contact's chat: send the next messages with the owner's full tool set (off on every chat change). */
  protected readonly fullTools = linkedSignal({
    source: this.chatId,
    computation: () => false,
  });
  protected readonly contactChat = computed(
    () => this.chatKind() === 'whatsapp',
  );
  /** A reply runs that this page did not start (another tab, a scheduled job), as the chat list says. */
  protected readonly runningElsewhere = linkedSignal(() => this.running());

  /** When the live reply's last event arrived: the thinking indicator counts from there. */
  protected readonly waitingSince = signal(Date.now());
  /** The user message being edited (Edit on the last message), and its text. */
  protected readonly editingId = signal<string | null>(null);
  protected readonly editDraft = signal('');
  protected readonly editTooLong = computed(
    () => this.editDraft().length > MESSAGE_MAX_LENGTH,
  );
  /** The chat's latest reply, once it has ended: its buttons show without hovering. */
  private readonly lastReply = computed(() => {
    const last = this.messages().at(-1);
    return last &&
      last.role === 'assistant' &&
      !isLocalMessage(last) &&
      last.status !== 'streaming' &&
      !isModeEvent(last)
      ? last
      : null;
  });
  /** The owner's message that the latest reply answers. */
  private readonly lastOwnMessage = computed(() => {
    if (!this.lastReply()) return null;
    const user = this.messages().at(-2);
    return user?.role === 'user' && !user.author && !user.trigger ? user : null;
  });
  /** A version switch is under way: the arrows wait for it. */
  protected readonly switching = signal(false);
  private readonly noActions: readonly MessageAction[] = [];
  private readonly retryActions: readonly MessageAction[] = ['retry'];
  private readonly regenerateActions: readonly MessageAction[] = ['regenerate'];
  private readonly editActions: readonly MessageAction[] = ['edit'];

  protected readonly liveView = computed(() => {
    const reply = this.live();
    return reply ? liveReplyView(reply) : null;
  });

  /** A phone's width: the composer's placeholder must fit on one line there. */
  private readonly narrow = toSignal(
    inject(BreakpointObserver)
      .observe(NARROW_COMPOSER_QUERY)
      .pipe(map((state) => state.matches)),
    { initialValue: false },
  );
  protected readonly composerPlaceholder = computed(() =>
    this.narrow()
      ? 'Message Metatron…'
      : 'Message Metatron…  (Enter sends, Shift+Enter adds a line)',
  );

  /** The pending actions (the shell keeps them loaded and live) and those settled in this console. */
  private readonly pendingActions = inject(PendingActions);
  protected readonly noInlineActions: readonly InlineAction[] = [];
  /**
   * This chat's actions under the reply whose turn proposed them (by the reply's id, or a tool call that
   * names the action); the others (a reply not loaded, or none named) in a block at the end.
   */
  protected readonly inlineActions = computed(() => {
    const chatId = this.chatId();
    const items: InlineAction[] = [
      ...this.pendingActions
        .list()
        .filter((action) => action.chatId === chatId)
        .map((action) => ({ action, outcome: null })),
      ...this.pendingActions
        .settled()
        .filter((item) => item.action.chatId === chatId)
        .map(({ action, outcome }) => ({ action, outcome })),
    ];
    const placed = new Map<string, InlineAction[]>();
    if (!items.length) return { placed, unplaced: items };
    const owner = new Map<string, string>();
    const live = this.liveView();
    for (const message of live ? [...this.messages(), live] : this.messages())
      for (const part of message.parts ?? [])
        if (part.type === 'tool_call' && part.pendingActionId)
          owner.set(part.pendingActionId, message.id);
    const shown = new Set(this.messages().map((message) => message.id));
    const unplaced: InlineAction[] = [];
    for (const item of items) {
      const { id, messageId } = item.action;
      const at =
        owner.get(id) ??
        (messageId && shown.has(messageId) ? messageId : undefined);
      if (at) placed.set(at, [...(placed.get(at) ?? []), item]);
      else unplaced.push(item);
    }
    return { placed, unplaced };
  });
  protected readonly busy = computed(
    () => this.sending() || this.runningElsewhere(),
  );
  protected readonly tooLong = computed(
    () => this.draft().length > MESSAGE_MAX_LENGTH,
  );
  protected readonly composerDisabled = computed(
    () => this.busy() || this.loading() || this.notFound(),
  );
  /** The text box stays usable while a reply streams: the next message can be typed (it sends afterwards). */
  protected readonly inputDisabled = computed(
    () => this.loading() || this.notFound(),
  );
  protected readonly canSend = computed(
    () =>
      !this.composerDisabled() &&
      this.draft().trim().length > 0 &&
      !this.tooLong() &&
      !this.uploads.uploading(),
  );
  protected readonly sendErrorLinksSettings = computed(() =>
    mentionsSettings(this.sendError() ?? ''),
  );
  protected readonly composerId = `mt-composer-${Math.random().toString(36).slice(2, 8)}`;

  private streamSub: Subscription | null = null;
  private latestSub: Subscription | null = null;
  private earlierSub: Subscription | null = null;
  private stickToBottom = true;
  /** Set before older messages are prepended: keep the same content in view. */
  private keepDistanceFromBottom: number | null = null;
  private localIds = 0;
  /**
   * The next latest page replaces the view's messages (a new version changed what follows it): `keep` the
   * older ones loaded above it (the view was already cut at the new version), or `drop` them (changed elsewhere).
   */
  private replaceNextPage: 'keep' | 'drop' | null = null;
  /** The message a `#message-<id>` link asks for: earlier pages are loaded until it is shown. */
  private seekId: string | null = null;
  private readonly fragment = toSignal(inject(ActivatedRoute).fragment, {
    initialValue: null,
  });
  /** The id a draft became while its first reply streams: opening it must not reload the thread. */
  private startedId: string | null = null;

  /** The open chat once it is stored: none for a draft (the server makes one). */
  protected storedChatId(): string | null {
    const chatId = this.openId();
    return chatId === DRAFT_CHAT_ID ? null : chatId;
  }

  /** The chat a voice call talks in: none for a draft (the server makes one). */
  protected voiceChatId(): string | null {
    return this.storedChatId();
  }

  /** A call started: a draft's new chat opens like one whose first reply started. */
  protected voiceStarted(chatId: string): void {
    if (this.chatId() !== DRAFT_CHAT_ID) return;
    this.startedId = chatId;
    this.chatStarted.emit(chatId);
  }

  /** The chat's id on the server: a draft's once its first message is stored, before the route follows. */
  private openId(): string {
    const chatId = this.chatId();
    return chatId === DRAFT_CHAT_ID && this.startedId ? this.startedId : chatId;
  }

  constructor() {
    effect(() => {
      const chatId = this.chatId();
      untracked(() => {
        if (chatId === this.startedId) return;
        this.startedId = null;
        this.open(chatId);
      });
    });

    // A link to one message (`#message-<id>`, from the Memory page): shown, scrolled to, highlighted.
    effect(() => {
      const match = /^message-([0-9a-f]{24})$/i.exec(this.fragment() ?? '');
      this.chatId();
      untracked(() => {
        this.seekId = match ? match[1].toLowerCase() : null;
        this.seek();
      });
    });
    effect(() => {
      this.messages();
      this.loading();
      this.loadingEarlier();
      untracked(() => this.seek());
    });

    // A reply that this page did not stream ended (or started) in this chat: show what was stored.
    inject(EventStream)
      .on('chats.changed')
      .pipe(
        filter((event) => event.chatId === this.openId() && !this.sending()),
        filter(
          (event) =>
            event.change === 'reply-ended' ||
            event.change === 'reply-started' ||
            event.change === 'delivery' ||
            event.change === 'mode' ||
            event.change === 'transcript' ||
            event.change === 'versions',
        ),
        takeUntilDestroyed(),
      )
      .subscribe((event) => {
        if (event.change === 'reply-started') this.runningElsewhere.set(true);
        else if (event.change === 'reply-ended') {
          this.runningElsewhere.set(false);
          this.stopping.set(false);
        }
        // Another version shown (here or elsewhere): the page replaces what is loaded below the switch.
        if (event.change === 'versions') {
          if (this.switching()) return;
          this.replaceNextPage ??= 'drop';
        }
        this.loadLatest(false);
      });

    // The server is back after an outage (it may have restarted): the chat shows exactly what is stored, so a
    // reply cut by the outage appears once, as the server closed it, with its Retry and Edit.
    toObservable(inject(ServerStatus).recovered)
      .pipe(skip(1), takeUntilDestroyed())
      .subscribe(() => {
        if (!this.sending())
          this.loadLatest(this.messages().length === 0, this.openId(), true);
      });

    // Follow the text as it streams, unless the owner scrolled up to read. Pending attachments and notices
    // grow the composer and shrink the list, so they count as a change too.
    afterRenderEffect(() => {
      this.messages();
      this.live();
      this.uploads.items();
      this.uploads.notice();
      const element = this.scroller()?.nativeElement;
      if (!element) return;
      if (this.keepDistanceFromBottom !== null) {
        element.scrollTop = element.scrollHeight - this.keepDistanceFromBottom;
        this.keepDistanceFromBottom = null;
      } else if (this.stickToBottom) {
        element.scrollTop = element.scrollHeight;
      }
    });

    inject(DestroyRef).onDestroy(() => {
      this.cancelAll();
      this.uploads.clear();
    });
  }

  protected onScroll(): void {
    const element = this.scroller()?.nativeElement;
    if (!element) return;
    this.stickToBottom =
      element.scrollHeight - element.scrollTop - element.clientHeight <
      STICKY_BOTTOM_PX;
    this.awayFromBottom.set(!this.stickToBottom);
  }

  /**
   * Brings the sought message into view: pages back ("Load earlier") until it is loaded, then
   * scrolls it to the middle and highlights it briefly. Gives up when the chat has no earlier
   * page (the message is not in this chat).
   */
  private seek(): void {
    const id = this.seekId;
    if (!id || this.loading() || this.loadingEarlier()) return;
    if (!this.messages().some((message) => message.id === id)) {
      if (this.hasEarlier() && !this.earlierError()) this.loadEarlier();
      else this.seekId = null;
      return;
    }
    this.seekId = null;
    this.stickToBottom = false;
    this.awayFromBottom.set(true);
    afterNextRender(
      // After this render's own scroll keeping (a prepended page keeps its place first).
      () =>
        setTimeout(() => {
          const element = this.scroller()?.nativeElement.querySelector(
            `[data-message-id="${id}"]`,
          );
          if (!(element instanceof HTMLElement)) return;
          this.stickToBottom = false;
          element.scrollIntoView?.({ block: 'center' });
          element.setAttribute('data-highlighted', 'true');
          element.animate?.(
            [
              { backgroundColor: 'var(--mat-sys-tertiary-container)' },
              { backgroundColor: 'transparent' },
            ],
            { duration: HIGHLIGHT_MS, easing: 'ease-in' },
          );
          setTimeout(
            () => element.removeAttribute('data-highlighted'),
            HIGHLIGHT_MS,
          );
        }),
      { injector: this.injector },
    );
  }

  protected scrollToLatest(): void {
    const element = this.scroller()?.nativeElement;
    this.stickToBottom = true;
    this.awayFromBottom.set(false);
    if (element) element.scrollTop = element.scrollHeight;
  }

  /** A text too long for a message goes with it as a text file instead; the message box is free again. */
  protected attachDraftAsFile(): void {
    const text = this.draft();
    if (!text) return;
    this.uploads.add([
      new File([text], PASTED_TEXT_FILE_NAME, { type: 'text/plain' }),
    ]);
    this.draft.set('');
    this.focusComposer();
  }

  protected onInput(value: string): void {
    this.draft.set(value);
    if (this.sendError()) this.sendError.set(null);
  }

  /** Enter sends, Shift+Enter (or Enter while an input method composes) adds a line. */
  protected onKeydown(event: KeyboardEvent): void {
    if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    this.send();
  }

  /** The paperclip's file input. */
  protected onFilesPicked(input: HTMLInputElement): void {
    if (input.files?.length) this.uploads.add(Array.from(input.files));
    // The same file can be picked again after removing it.
    input.value = '';
  }

  protected onDragEnter(event: DragEvent): void {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    this.dragDepth++;
    this.dragging.set(true);
  }

  protected onDragOver(event: DragEvent): void {
    if (!carriesFiles(event)) return;
    // Without this the browser would open the file instead of dropping it here.
    event.preventDefault();
    if (event.dataTransfer)
      event.dataTransfer.dropEffect = this.composerDisabled() ? 'none' : 'copy';
  }

  protected onDragLeave(event: DragEvent): void {
    if (!carriesFiles(event)) return;
    this.dragDepth = Math.max(0, this.dragDepth - 1);
    if (this.dragDepth === 0) this.dragging.set(false);
  }

  protected onDrop(event: DragEvent): void {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    this.dragDepth = 0;
    this.dragging.set(false);
    const files = Array.from(event.dataTransfer?.files ?? []);
    if (files.length && !this.composerDisabled()) this.uploads.add(files);
  }

  protected retryLoad(): void {
    this.loadLatest(true);
  }

  /** Sends the message a spend cap stopped again, allowed over the daily and monthly caps once. */
  protected allowOverBudget(): void {
    const content = this.overBudgetContent();
    if (!content) return;
    this.overBudgetContent.set(null);
    this.draft.set(content);
    this.send({ allowOverBudget: true });
  }

  protected send(
    extra: Pick<SendMessageRequest, 'allowOverBudget'> = {},
  ): void {
    if (!this.canSend()) return;
    const content = this.draft().trim();
    this.lastSentContent = content;
    const chatId = this.openId();
    const localId = `${LOCAL_ID_PREFIX}${++this.localIds}`;
    const now = new Date().toISOString();
    const attached = this.uploads.take();
    const files = attached.flatMap((item) =>
      item.status === 'done' && item.uploaded ? [item.uploaded] : [],
    );
    const optimistic: ChatMessage = {
      id: localId,
      chatId,
      role: 'user',
      content,
      status: 'complete',
      createdAt: now,
      updatedAt: now,
    };
    if (files.length) optimistic.attachments = asMessageAttachments(files);
    const body: SendMessageRequest = files.length
      ? { content, attachmentIds: files.map((file) => file.id) }
      : { content };
    if (this.contactChat() && this.fullTools()) body.fullTools = true;
    if (extra.allowOverBudget) body.allowOverBudget = true;

    this.messages.update((list) => [...list, optimistic]);
    this.draft.set('');
    this.follow(this.chatStream.send(chatId, body), {
      chatId,
      localId,
      takeBack: (reason, storedId) => {
        this.messages.update((list) =>
          list.filter(
            (message) => message.id !== localId && message.id !== storedId,
          ),
        );
        if (!this.draft()) this.draft.set(content);
        this.uploads.restore(attached);
        return reason;
      },
    });
  }

  /** The buttons under a message: Retry / Regenerate on the latest reply, Edit on the message it answers. */
  protected settleAction(settled: ActionSettled): void {
    this.pendingActions.settle(settled);
  }

  /** Edit on every message of the owner's, Retry / Regenerate on every reply to one (each makes a new version). */
  protected actionsFor(message: ChatMessage): readonly MessageAction[] {
    if (this.busy() || this.live() || this.editingId() || this.switching())
      return this.noActions;
    if (isLocalMessage(message) || message.status === 'streaming')
      return this.noActions;
    if (message.role === 'user')
      return message.author || message.trigger
        ? this.noActions
        : this.editActions;
    if (isModeEvent(message) || this.answersContact(message))
      return this.noActions;
    return message.status === 'error'
      ? this.retryActions
      : this.regenerateActions;
  }

  /** Older messages keep their buttons for hovering; the latest exchange shows them. */
  protected quietActions(message: ChatMessage): boolean {
    return message !== this.lastReply() && message !== this.lastOwnMessage();
  }

  /** Version arrows wait while a reply runs, a switch is under way or a message is being edited. */
  protected readonly versionsDisabled = computed(
    () =>
      this.busy() || !!this.live() || !!this.editingId() || this.switching(),
  );

  /** A reply to a contact's message (the message before it is theirs): the server regenerates only replies to the owner. */
  private answersContact(reply: ChatMessage): boolean {
    const list = this.messages();
    for (let i = list.indexOf(reply) - 1; i >= 0; i--)
      if (list[i].role === 'user') return !!list[i].author;
    return false;
  }

  /**
   * Shows version `n` of `message`: the chat's newest page comes back as now shown. The focus stays on the
   * arrows of the message at the same place (its id changed with the version).
   */
  protected switchVersion(message: ChatMessage, n: number): void {
    if (this.versionsDisabled()) return;
    const chatId = this.openId();
    const position = this.messages().indexOf(message);
    const forward = n > (message.versions?.index ?? 0);
    this.switching.set(true);
    this.sendError.set(null);
    this.api.switchVersion(chatId, message.id, n).subscribe({
      next: (page) => {
        this.switching.set(false);
        if (chatId !== this.openId()) return;
        this.latestSub?.unsubscribe();
        const kept = this.messages().slice(0, Math.max(0, position));
        this.showPage(page, kept);
        afterNextRender(() => this.focusVersionArrow(position, forward), {
          injector: this.injector,
        });
      },
      error: (error: unknown) => {
        this.switching.set(false);
        this.sendError.set(
          inlineErrorMessage(error, "Couldn't show that version."),
        );
        this.loadLatest(false);
      },
    });
  }

  /**
   * The page as the server now shows it. Messages loaded above it stay only when they come before the
   * point that changed (`kept`) and before the page: a new version changes everything after it.
   */
  private showPage(page: ChatMessage[], kept: ChatMessage[] = []): void {
    const full = page.length >= MESSAGE_PAGE_SIZE;
    if (!full) {
      this.messages.set(page);
      this.hasEarlier.set(false);
      return;
    }
    const fresh = new Set(page.map((message) => message.id));
    const firstAt = page[0].createdAt;
    const older = kept.filter(
      (message) =>
        !isLocalMessage(message) &&
        !fresh.has(message.id) &&
        message.createdAt < firstAt,
    );
    this.messages.set([...older, ...page]);
    this.hasEarlier.set(true);
  }

  private focusVersionArrow(position: number, forward: boolean): void {
    const element = this.scroller()?.nativeElement;
    const message = element?.querySelectorAll('mt-chat-message')[position];
    const arrows = message?.querySelectorAll<HTMLButtonElement>(
      '[data-testid="version-previous"], [data-testid="version-next"]',
    );
    if (!arrows?.length) return;
    const [previous, next] = [arrows[0], arrows[arrows.length - 1]];
    const wanted = forward ? next : previous;
    (wanted.disabled ? (forward ? previous : next) : wanted).focus();
  }

  protected onAction(message: ChatMessage, action: MessageAction): void {
    if (action === 'edit') {
      this.editingId.set(message.id);
      this.editDraft.set(message.content);
      afterNextRender(() => this.editBox()?.nativeElement.focus(), {
        injector: this.injector,
      });
      return;
    }
    this.regenerate(message.id);
  }

  protected cancelEdit(): void {
    this.editingId.set(null);
    this.focusComposer();
  }

  /** Enter sends the edit, Shift+Enter adds a line, Escape cancels. */
  protected onEditKeydown(event: KeyboardEvent): void {
    if (event.key === 'Escape') {
      event.preventDefault();
      this.cancelEdit();
      return;
    }
    if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    this.saveEdit();
  }

  protected saveEdit(): void {
    const message = this.messages().find((m) => m.id === this.editingId());
    const content = this.editDraft().trim();
    if (!message || message.role !== 'user') return;
    if (!content || this.editTooLong()) return;
    if (content === message.content.trim()) {
      this.cancelEdit();
      return;
    }
    this.regenerate(message.id, content);
  }

  /**
   * Retry, Regenerate (`messageId` a reply) or Edit (`messageId` the owner's message, with `content`): a new
   * version, streamed like a sent message; the old one stays behind "← n/m →". The view drops what the new
   * version replaces. Refused: the view goes back to what it was, with the reason above the composer.
   */
  protected regenerate(messageId: string, content?: string): void {
    if (this.busy()) return;
    const chatId = this.chatId();
    const before = this.messages();
    const at = before.findIndex((message) => message.id === messageId);
    if (at < 0) return;
    const target = before[at];
    const editing = content !== undefined && target.role === 'user';
    const localId = editing
      ? `${LOCAL_ID_PREFIX}${++this.localIds}`
      : undefined;
    this.messages.set([
      ...before.slice(0, at),
      ...(editing && localId
        ? [{ ...target, id: localId, content, versions: undefined }]
        : []),
    ]);
    // The page after the reply is the new branch: nothing loaded before stays below it.
    this.replaceNextPage = 'keep';
    this.editingId.set(null);
    const body: RegenerateReplyRequest =
      content !== undefined ? { content } : {};
    if (this.contactChat() && this.fullTools()) body.fullTools = true;
    this.follow(this.chatStream.regenerate(chatId, messageId, body), {
      chatId,
      localId,
      takeBack: (reason) => {
        this.replaceNextPage = null;
        this.messages.set(before);
        return reason;
      },
    });
  }

  /**
   * Streams a reply into the view. `takeBack` undoes the view when nothing of it was kept (refused, or the
   * message could not be stored) and returns the reason to show.
   */
  private follow(
    stream: Observable<ChatStreamEvent>,
    options: {
      /** The chat the stream writes to (a draft's id until the server stores it). */
      chatId: string;
      localId?: string;
      takeBack: (reason: string, storedId?: string) => string;
    },
  ): void {
    const { chatId } = options;
    this.sendError.set(null);
    this.overBudgetContent.set(null);
    this.sending.set(true);
    this.live.set(NEW_REPLY);
    this.waitingSince.set(Date.now());
    this.scrollToLatest();

    let started = false;
    let unsaved = false;
    let storedId: string | undefined;
    const takeBack = (reason: string) => {
      const shown = options.takeBack(reason, storedId);
      this.live.set(null);
      this.sending.set(false);
      this.sendError.set(shown);
      this.focusComposer();
    };
    this.streamSub = stream.subscribe({
      next: (event) => {
        started = true;
        this.waitingSince.set(Date.now());
        if (event.type === 'error' && event.data.overBudget)
          this.overBudgetContent.set(this.lastSentContent || null);
        if (event.type === 'error' && event.data.unsaved) {
          unsaved = true;
          this.streamSub = null;
          takeBack(event.data.message);
          return;
        }
        if (event.type === 'message') {
          storedId = event.data.id;
          if (chatId === DRAFT_CHAT_ID) {
            this.startedId = event.data.chatId;
            this.chatStarted.emit(event.data.chatId);
          }
          this.messages.update((list) =>
            list.map((message) =>
              message.id === options.localId || message.id === event.data.id
                ? event.data
                : message,
            ),
          );
        } else {
          this.live.update((reply) => reply && applyReplyEvent(reply, event));
        }
      },
      error: (error: unknown) => {
        if (unsaved) return;
        if (error instanceof ChatSendError && !started) {
          // Refused before anything happened: the view goes back.
          takeBack(error.message);
          return;
        }
        const message =
          error instanceof Error ? error.message : 'The reply failed.';
        this.live.update(
          (reply) =>
            reply && {
              ...reply,
              finished: true,
              error: reply.error ?? message,
            },
        );
        this.finishReply();
      },
      complete: () => {
        if (unsaved) return;
        this.live.update((reply) => reply && { ...reply, finished: true });
        this.finishReply();
      },
    });
  }

  protected stop(): void {
    if (this.stopping()) return;
    this.stopping.set(true);
    this.api.stopReply(this.openId()).subscribe({
      next: () => {
        // Our own stream ends with `done { stopped }`; a reply running elsewhere is over now.
        if (this.sending()) return;
        this.stopping.set(false);
        this.runningElsewhere.set(false);
        this.loadLatest(false);
        this.replyFinished.emit();
      },
      error: (error: unknown) => {
        this.stopping.set(false);
        this.sendError.set(
          inlineErrorMessage(error, 'Stopping the reply failed.'),
        );
      },
    });
  }

  protected loadEarlier(): void {
    const oldest = this.messages().find((message) => !isLocalMessage(message));
    if (!oldest || this.loadingEarlier()) return;
    this.loadingEarlier.set(true);
    this.earlierError.set(null);
    this.earlierSub = this.api
      .chatMessages(this.openId(), {
        limit: MESSAGE_PAGE_SIZE,
        before: oldest.id,
      })
      .subscribe({
        next: (page) => {
          const element = this.scroller()?.nativeElement;
          if (element)
            this.keepDistanceFromBottom =
              element.scrollHeight - element.scrollTop;
          this.messages.update((list) => prependPage(list, page));
          this.hasEarlier.set(page.length >= MESSAGE_PAGE_SIZE);
          this.loadingEarlier.set(false);
        },
        error: (error: unknown) => {
          this.loadingEarlier.set(false);
          this.earlierError.set(
            inlineErrorMessage(error, "Couldn't load the earlier messages."),
          );
        },
      });
  }

  private open(chatId: string): void {
    this.cancelAll();
    this.messages.set([]);
    this.live.set(null);
    this.sending.set(false);
    this.stopping.set(false);
    this.sendError.set(null);
    this.notFound.set(false);
    this.hasEarlier.set(false);
    this.earlierError.set(null);
    this.loadingEarlier.set(false);
    this.draft.set('');
    this.editingId.set(null);
    this.uploads.clear();
    this.stickToBottom = true;
    this.awayFromBottom.set(false);
    if (chatId === DRAFT_CHAT_ID) {
      // Nothing stored yet: the chat begins with its first message.
      this.loading.set(false);
      this.loadProblem.set(null);
      this.focusComposer();
      return;
    }
    this.loadLatest(true, chatId);
  }

  /**
   * Fetches the latest page; `initial` shows the loading state and decides "Load earlier" from scratch.
   * `resync` (the server is back after an outage): nothing local outlives the answer, not even a failed reply.
   */
  private loadLatest(
    initial: boolean,
    chatId = this.openId(),
    resync = false,
  ): void {
    this.latestSub?.unsubscribe();
    if (initial) {
      this.loading.set(true);
      this.loadProblem.set(null);
    }
    this.latestSub = this.api
      .chatMessages(chatId, { limit: MESSAGE_PAGE_SIZE })
      .subscribe({
        next: (page) => {
          const full = page.length >= MESSAGE_PAGE_SIZE;
          if (initial) {
            this.messages.set(page);
            this.hasEarlier.set(full);
          } else if (this.replaceNextPage) {
            const kept = this.replaceNextPage === 'keep' ? this.messages() : [];
            this.replaceNextPage = null;
            this.showPage(page, kept);
          } else {
            const merged = mergeLatestPage(this.messages(), page);
            // Older messages kept above the fresh page: "Load earlier" stays as it was; none kept: a full page may have more.
            this.hasEarlier.set(
              full && (merged.length > page.length ? this.hasEarlier() : true),
            );
            this.messages.set(merged);
          }
          this.loading.set(false);
          this.loadProblem.set(null);
          if (resync && !this.sending()) this.live.set(null);
          else this.settleLiveReply(page);
        },
        error: (error: unknown) => {
          this.loading.set(false);
          if (errorStatus(error) === 404) {
            this.notFound.set(true);
            this.messages.set([]);
            this.live.set(null);
          } else if (initial || this.messages().length === 0) {
            this.loadProblem.set(
              pageProblem(error, "Couldn't load the messages"),
            );
          }
        },
      });
  }

  /**
   * After the reload that follows `done` / `error`, the stored reply replaces the live one. A failure that
   * stored nothing (no message id) stays visible until the next message.
   */
  private settleLiveReply(page: ChatMessage[]): void {
    const reply = this.live();
    if (!reply?.finished || this.sending()) return;
    const stored =
      reply.messageId !== null &&
      page.some((message) => message.id === reply.messageId);
    if (stored || !reply.error) this.live.set(null);
  }

  private finishReply(): void {
    this.streamSub = null;
    this.sending.set(false);
    this.stopping.set(false);
    this.runningElsewhere.set(false);
    this.loadLatest(false);
    this.replyFinished.emit();
    this.focusComposer();
  }

  private focusComposer(): void {
    afterNextRender(() => this.composer()?.nativeElement.focus(), {
      injector: this.injector,
    });
  }

  private cancelAll(): void {
    this.streamSub?.unsubscribe();
    this.latestSub?.unsubscribe();
    this.earlierSub?.unsubscribe();
    this.streamSub = this.latestSub = this.earlierSub = null;
  }
}

/** The owner's mode switch, kept as an assistant message with only a mode part: an event line, not a reply. */
function isModeEvent(message: ChatMessage): boolean {
  return (
    !message.content &&
    (message.parts?.length ?? 0) > 0 &&
    (message.parts ?? []).every((part) => part.type === 'mode')
  );
}

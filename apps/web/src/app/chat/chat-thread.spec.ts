import { provideHttpClient } from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import { Router, provideRouter } from '@angular/router';
import { BreakpointObserver } from '@angular/cdk/layout';
import { Subject, of } from 'rxjs';
import { type ChatMessage, MESSAGE_MAX_LENGTH } from '@metatronos/shared-types';
import { EventStream } from '../core/event-stream';
import { ServerStatus } from '../core/server-status';
import {
  assistantMessage,
  conversation,
  userMessage,
} from '../testing/chat-data';
import { FakeEventStream } from '../testing/fake-event-stream';
import {
  ChatSendError,
  ChatStream,
  ChatStreamBrokenError,
  type ChatStreamEvent,
} from './chat-stream';
import { ChatThread } from './chat-thread';
import { MESSAGE_PAGE_SIZE } from './message-pages';
import { PendingActions } from '../actions/pending-actions';
import { pendingAction } from '../testing/action-data';

const LATEST = `/api/chats/c1/messages?limit=${MESSAGE_PAGE_SIZE}`;

describe('ChatThread', () => {
  let fixture: ComponentFixture<ChatThread>;
  let http: HttpTestingController;
  let events: FakeEventStream;
  let replies: Subject<ChatStreamEvent>;
  let send: jest.Mock;
  let regenerate: jest.Mock;

  const root = () => fixture.nativeElement as HTMLElement;
  const el = <T extends HTMLElement = HTMLElement>(testId: string) =>
    root().querySelector<T>(`[data-testid="${testId}"]`);
  const all = (testId: string) =>
    Array.from(
      root().querySelectorAll<HTMLElement>(`[data-testid="${testId}"]`),
    );
  const input = () =>
    el<HTMLTextAreaElement>('composer-input') as HTMLTextAreaElement;
  const sendButton = () =>
    el<HTMLButtonElement>('send-button') as HTMLButtonElement;
  const stable = () => fixture.whenStable();

  function type(text: string): void {
    input().value = text;
    input().dispatchEvent(new Event('input'));
  }

  function press(key: string, init: KeyboardEventInit = {}): KeyboardEvent {
    const event = new KeyboardEvent('keydown', {
      key,
      cancelable: true,
      ...init,
    });
    input().dispatchEvent(event);
    return event;
  }

  function reply(event: ChatStreamEvent): void {
    replies.next(event);
  }

  async function open(
    page: ChatMessage[],
    inputs: Record<string, unknown> = {},
  ): Promise<void> {
    fixture = TestBed.createComponent(ChatThread);
    fixture.componentRef.setInput('chatId', 'c1');
    fixture.componentRef.setInput('chatTitle', 'Trip planning');
    for (const [name, value] of Object.entries(inputs))
      fixture.componentRef.setInput(name, value);
    await stable();
    http.expectOne(LATEST).flush(page);
    await stable();
  }

  /** Types a message, sends it with Enter and lets the stream start. */
  async function sendMessage(text: string): Promise<void> {
    type(text);
    await stable();
    press('Enter');
    await stable();
  }

  beforeEach(() => {
    events = new FakeEventStream();
    replies = new Subject<ChatStreamEvent>();
    send = jest.fn(() => replies.asObservable());
    regenerate = jest.fn(() => replies.asObservable());
    TestBed.configureTestingModule({
      imports: [ChatThread],
      providers: [
        provideHttpClient(),
        provideHttpClientTesting(),
        provideRouter([]),
        { provide: EventStream, useValue: events },
        { provide: ChatStream, useValue: { send, regenerate } },
      ],
    });
    http = TestBed.inject(HttpTestingController);
  });

  afterEach(() => http.verify());

  it('shows the stored messages oldest first, with the model, the "stopped" note and stored errors', async () => {
    await open([
      userMessage('m1', 'Plan a trip'),
      assistantMessage('m2', 'Sure, **Lisbon**?', {
        model: 'gemini-2.5-flash',
      }),
      userMessage('m3', 'Longer please'),
      assistantMessage('m4', 'Day one…', { status: 'stopped' }),
      userMessage('m5', 'Again'),
      assistantMessage('m6', 'Partial', {
        status: 'error',
        error: 'The model timed out.',
      }),
    ]);
    expect(el('chat-title')?.textContent?.trim()).toBe('Trip planning');
    expect(
      all('user-message').map((m) =>
        m.textContent?.replace('You said:', '').trim(),
      ),
    ).toEqual(['Plan a trip', 'Longer please', 'Again']);
    const replies = all('assistant-message');
    expect(replies).toHaveLength(3);
    expect(replies[0].querySelector('strong')?.textContent).toBe('Lisbon');
    expect(
      replies[0].querySelector('[data-testid="assistant-model"]')?.textContent,
    ).toBe('gemini-2.5-flash');
    expect(
      replies[1].querySelector('[data-testid="assistant-stopped"]')
        ?.textContent,
    ).toBe('stopped');
    expect(
      replies[2]
        .querySelector('[data-testid="assistant-error"]')
        ?.textContent?.trim(),
    ).toBe('The model timed out.');
    expect(el('load-earlier')).toBeNull();
  });

  it('shows the full composer hint on wide screens and a one-line one on a phone', async () => {
    await open([]);
    expect(input().placeholder).toBe(
      'Message Metatron…  (Enter sends, Shift+Enter adds a line)',
    );
    fixture.destroy();
    jest
      .spyOn(TestBed.inject(BreakpointObserver), 'observe')
      .mockReturnValue(of({ matches: true, breakpoints: {} }));
    await open([]);
    expect(input().placeholder).toBe('Message Metatron…');
  });

  it('renders stored tool calls in order with the text, as chips', async () => {
    await open([
      userMessage('m1', 'Who is Ana?'),
      assistantMessage('m2', 'Let me check. Found her.', {
        parts: [
          { type: 'text', text: 'Let me check.' },
          {
            type: 'tool_call',
            id: 't1',
            name: 'db_query',
            arguments: { collection: 'contacts' },
            result: '{"n":1}',
            error: null,
            durationMs: 42,
          },
          { type: 'text', text: 'Found her.' },
        ],
      }),
    ]);
    const reply = all('assistant-message')[0];
    const order = Array.from(
      reply.querySelectorAll('mt-markdown, [data-testid="tool-chip"]'),
    ).map((node) => node.textContent?.replace(/\s+/g, ' ').trim());
    expect(order[0]).toBe('Let me check.');
    expect(order[1]).toContain('Queried the database');
    expect(order[1]).toContain('42 ms');
    expect(order[2]).toBe('Found her.');
  });

  it('offers older messages when the page came back full, and keeps them above', async () => {
    const latest = conversation(MESSAGE_PAGE_SIZE, 'n');
    await open(latest);
    el('load-earlier')?.click();
    await stable();
    http
      .expectOne(`/api/chats/c1/messages?limit=${MESSAGE_PAGE_SIZE}&before=n1`)
      .flush([userMessage('o1', 'the very first')]);
    await stable();
    const users = all('user-message');
    expect(users[0].textContent).toContain('the very first');
    expect(users).toHaveLength(MESSAGE_PAGE_SIZE / 2 + 1);
    expect(el('load-earlier')).toBeNull(); // that page was short: nothing older
  });

  it('opens a #message-<id> link older than the first page: pages back until it is shown, then highlights it', async () => {
    const target = 'a'.repeat(24);
    await TestBed.inject(Router).navigateByUrl(`/#message-${target}`);
    await open(conversation(MESSAGE_PAGE_SIZE, 'n'));
    http
      .expectOne(`/api/chats/c1/messages?limit=${MESSAGE_PAGE_SIZE}&before=n1`)
      .flush(conversation(MESSAGE_PAGE_SIZE, 'p'));
    await stable();
    http
      .expectOne(`/api/chats/c1/messages?limit=${MESSAGE_PAGE_SIZE}&before=p1`)
      .flush([userMessage(target, 'Anna is allergic to peanuts')]);
    await stable();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const shown = root().querySelector(`[data-message-id="${target}"]`);
    expect(shown?.textContent).toContain('Anna is allergic to peanuts');
    expect(shown?.getAttribute('data-highlighted')).toBe('true');
  }, 20_000);

  it('shows an empty conversation hint and cannot send blank input', async () => {
    await open([]);
    expect(el('empty-thread')).not.toBeNull();
    expect(sendButton().disabled).toBe(true);
    type('   \n  ');
    await stable();
    expect(sendButton().disabled).toBe(true);
    press('Enter');
    await stable();
    expect(send).not.toHaveBeenCalled();
  });

  it('adds a line on Shift+Enter and sends on Enter', async () => {
    await open([]);
    type('first line');
    await stable();
    const shifted = press('Enter', { shiftKey: true });
    expect(shifted.defaultPrevented).toBe(false);
    expect(send).not.toHaveBeenCalled();

    const plain = press('Enter');
    expect(plain.defaultPrevented).toBe(true);
    expect(send).toHaveBeenCalledWith('c1', { content: 'first line' });
  });

  it('streams a reply: optimistic message, growing text, tool chips in order, then the stored version', async () => {
    await open([]);
    await sendMessage('What is on today?');

    // Shown at once, Send locked, Stop offered; the next message can be typed meanwhile.
    expect(all('user-message').map((m) => m.textContent)).toEqual([
      expect.stringContaining('What is on today?'),
    ]);
    expect(input().value).toBe('');
    expect(input().disabled).toBe(false);
    expect(sendButton().disabled).toBe(true);
    expect(el('stop-button')).not.toBeNull();
    expect(el('assistant-thinking')).not.toBeNull();

    reply({ type: 'message', data: userMessage('u1', 'What is on today?') });
    reply({ type: 'delta', data: { text: 'Let me ' } });
    reply({ type: 'delta', data: { text: 'look.' } });
    reply({
      type: 'tool_call',
      data: {
        id: 't1',
        name: 'db_query',
        arguments: { collection: 'schedule', filter: { day: 'today' } },
      },
    });
    await stable();
    expect(all('user-message')[0].getAttribute('data-message-id')).toBe('u1');
    let live = all('assistant-message')[0];
    expect(live.textContent).toContain('Let me look.');
    const chip = live.querySelector<HTMLElement>('[data-testid="tool-chip"]');
    expect(chip?.getAttribute('data-status')).toBe('running');
    expect(chip?.textContent).toContain('running');

    reply({
      type: 'tool_result',
      data: {
        id: 't1',
        name: 'db_query',
        result: '[{"title":"Dentist"}]',
        durationMs: 1500,
      },
    });
    reply({ type: 'delta', data: { text: 'You have the **dentist**.' } });
    await stable();
    live = all('assistant-message')[0];
    expect(
      live
        .querySelector('[data-testid="tool-chip"]')
        ?.getAttribute('data-status'),
    ).toBe('ok');
    expect(
      live.querySelector('[data-testid="tool-chip-duration"]')?.textContent,
    ).toBe('1.5 s');
    const order = Array.from(
      live.querySelectorAll('mt-markdown, [data-testid="tool-chip"]'),
    ).map((n) => n.tagName.toLowerCase());
    expect(order).toEqual(['mt-markdown', 'div', 'mt-markdown']);
    expect(live.querySelector('strong')?.textContent).toBe('dentist');

    reply({ type: 'done', data: { messageId: 'a1' } });
    replies.complete();
    await stable();
    // The view becomes what was stored.
    http
      .expectOne(LATEST)
      .flush([
        userMessage('u1', 'What is on today?'),
        assistantMessage('a1', 'Stored reply text', { model: 'gpt-4.1-mini' }),
      ]);
    await stable();
    const stored = all('assistant-message');
    expect(stored).toHaveLength(1);
    expect(stored[0].textContent).toContain('Stored reply text');
    expect(
      stored[0].querySelector('[data-testid="assistant-model"]')?.textContent,
    ).toBe('gpt-4.1-mini');
    expect(el('stop-button')).toBeNull();
    expect(input().disabled).toBe(false);
  });

  it('lets the next message be typed while a reply streams, and sends it only once the reply is done', async () => {
    await open([]);
    await sendMessage('First question');
    reply({ type: 'message', data: userMessage('u1', 'First question') });
    reply({ type: 'delta', data: { text: 'Thinking about it' } });
    await stable();

    type('Second question');
    await stable();
    const early = press('Enter');
    await stable();
    expect(early.defaultPrevented).toBe(true);
    expect(send).toHaveBeenCalledTimes(1);
    expect(input().value).toBe('Second question');
    expect(sendButton().disabled).toBe(true);
    expect(el('stop-button')).not.toBeNull();

    reply({ type: 'done', data: { messageId: 'a1' } });
    replies.complete();
    await stable();
    http
      .expectOne(LATEST)
      .flush([
        userMessage('u1', 'First question'),
        assistantMessage('a1', 'Thinking about it'),
      ]);
    await stable();
    expect(input().value).toBe('Second question');
    expect(sendButton().disabled).toBe(false);
    replies = new Subject<ChatStreamEvent>();
    press('Enter');
    await stable();
    expect(send).toHaveBeenLastCalledWith('c1', { content: 'Second question' });
  });

  it('offers to allow one reply over budget when a spend cap stopped it, and sends it again with allowOverBudget', async () => {
    await open([]);
    await sendMessage('Plan my week');
    reply({ type: 'message', data: userMessage('u1', 'Plan my week') });
    reply({
      type: 'error',
      data: {
        message:
          "Today's budget of $5.00 is used ($5.02). Raise it in Settings, or allow this one reply.",
        messageId: 'a1',
        overBudget: true,
      },
    });
    replies.complete();
    await stable();
    http.expectOne(LATEST).flush([userMessage('u1', 'Plan my week')]);
    await stable();
    const allow = el('allow-over-budget') as HTMLButtonElement | null;
    expect(allow).not.toBeNull();
    replies = new Subject<ChatStreamEvent>();
    allow?.click();
    await stable();
    expect(send).toHaveBeenLastCalledWith('c1', {
      content: 'Plan my week',
      allowOverBudget: true,
    });
    expect(el('allow-over-budget')).toBeNull();
  });

  it('keeps the partial text and shows the error under it when the reply fails', async () => {
    await open([]);
    await sendMessage('Hi');
    reply({ type: 'message', data: userMessage('u1', 'Hi') });
    reply({ type: 'delta', data: { text: 'Half an ans' } });
    reply({ type: 'error', data: { message: 'The provider returned 500.' } });
    replies.complete();
    await stable();
    // Nothing of the reply was stored: the page still shows what happened.
    http.expectOne(LATEST).flush([userMessage('u1', 'Hi')]);
    await stable();
    const live = all('assistant-message')[0];
    expect(live.textContent).toContain('Half an ans');
    expect(
      live
        .querySelector('[data-testid="assistant-error"]')
        ?.textContent?.trim(),
    ).toBe('The provider returned 500.');
    expect(input().disabled).toBe(false);
  });

  it('says so when the connection breaks mid-reply', async () => {
    await open([]);
    await sendMessage('Hi');
    reply({ type: 'delta', data: { text: 'Some' } });
    replies.error(new ChatStreamBrokenError(new Error('network')));
    await stable();
    http.expectOne(LATEST).flush([userMessage('u1', 'Hi')]);
    await stable();
    expect(el('assistant-error')?.textContent).toContain(
      'connection to the server was lost',
    );
  });

  it('after the server is back, shows the stored (interrupted) reply once, with Retry and Edit', async () => {
    await open([]);
    await sendMessage('Hi');
    reply({ type: 'message', data: userMessage('u1', 'Hi') });
    reply({ type: 'delta', data: { text: 'Some' } });
    replies.error(new ChatStreamBrokenError(new Error('network')));
    await stable();
    // The server is down: the reload after the break fails.
    http
      .expectOne(LATEST)
      .flush(null, { status: 0, statusText: 'Unknown Error' });
    await stable();
    expect(el('assistant-error')?.textContent).toContain(
      'connection to the server was lost',
    );

    TestBed.inject(ServerStatus).recover();
    await stable();
    http.expectOne(LATEST).flush([
      userMessage('u1', 'Hi'),
      assistantMessage('a1', 'Some', {
        status: 'error',
        error: 'This reply was interrupted because the server stopped.',
      }),
    ]);
    await stable();
    const shown = all('assistant-message');
    expect(shown).toHaveLength(1);
    expect(shown[0].getAttribute('data-message-id')).toBe('a1');
    expect(shown[0].textContent).toContain('interrupted');
    expect(root().textContent).not.toContain(
      'connection to the server was lost',
    );
    expect(all('message-retry')).toHaveLength(1);
    expect(all('message-edit')).toHaveLength(1);
  });

  it('shows a refused message with a link to the settings, and gives the text back', async () => {
    await open([]);
    await sendMessage('Hello there');
    replies.error(
      new ChatSendError(
        400,
        'No model configured: choose a primary model in Settings.',
      ),
    );
    await stable();
    expect(el('send-error')?.textContent).toContain(
      'No model configured: choose a primary model in Settings.',
    );
    expect(el('send-error-settings')?.getAttribute('href')).toBe('/settings');
    expect(all('user-message')).toHaveLength(0);
    expect(el('assistant-message')).toBeNull();
    expect(input().value).toBe('Hello there');
    expect(input().disabled).toBe(false);
  });

  it('gives the text back when the server could not store the message', async () => {
    await open([]);
    await sendMessage('Remember the milk');
    reply({ type: 'message', data: userMessage('u1', 'Remember the milk') });
    reply({ type: 'delta', data: { text: 'Noted' } });
    reply({
      type: 'error',
      data: {
        message: 'Your message could not be saved. Send it again.',
        messageId: null,
        unsaved: true,
      },
    });
    replies.complete();
    await stable();
    http.expectNone(LATEST);
    expect(el('send-error')?.textContent).toContain(
      'Your message could not be saved',
    );
    expect(all('user-message')).toHaveLength(0);
    expect(el('assistant-message')).toBeNull();
    expect(input().value).toBe('Remember the milk');
    expect(input().disabled).toBe(false);
  });

  it('shows other refusals without the settings link', async () => {
    await open([]);
    await sendMessage('Hello');
    replies.error(
      new ChatSendError(409, 'A reply is already running in this chat.'),
    );
    await stable();
    expect(el('send-error')?.textContent).toContain(
      'A reply is already running',
    );
    expect(el('send-error-settings')).toBeNull();
  });

  describe('Retry, Regenerate and Edit', () => {
    const button = (testId: string) =>
      el<HTMLButtonElement>(testId) as HTMLButtonElement;

    it('offers Retry on a failed reply, Regenerate on the others, Edit on every own message, and streams the new reply in its place', async () => {
      await open([
        userMessage('m1', 'Hi'),
        assistantMessage('m2', 'Hello'),
        userMessage('m3', 'Plan a trip'),
        assistantMessage('m4', '', {
          parts: [],
          status: 'error',
          error: 'OpenAI reported a server error.',
        }),
      ]);
      expect(all('message-retry')).toHaveLength(1);
      expect(all('message-regenerate')).toHaveLength(1);
      expect(
        button('message-retry')
          .closest('[data-message-id]')
          ?.getAttribute('data-message-id'),
      ).toBe('m4');
      expect(
        button('message-regenerate')
          .closest('[data-message-id]')
          ?.getAttribute('data-message-id'),
      ).toBe('m2');
      expect(all('message-edit')).toHaveLength(2);

      button('message-retry').click();
      await stable();
      expect(regenerate).toHaveBeenCalledWith('c1', 'm4', {});
      // The failed reply leaves the view; the new one streams, the buttons are gone meanwhile.
      expect(root().querySelector('[data-message-id="m4"]')).toBeNull();
      expect(el('assistant-thinking')).not.toBeNull();
      expect(all('message-edit')).toHaveLength(0);
      // The next message can be typed while the new reply streams; Stop is offered instead of Send.
      expect(input().disabled).toBe(false);
      expect(el('stop-button')).not.toBeNull();

      reply({ type: 'message', data: userMessage('m3', 'Plan a trip') });
      reply({ type: 'delta', data: { text: 'Lisbon?' } });
      reply({ type: 'done', data: { messageId: 'm5' } });
      replies.complete();
      await stable();
      http
        .expectOne(LATEST)
        .flush([
          userMessage('m1', 'Hi'),
          assistantMessage('m2', 'Hello'),
          userMessage('m3', 'Plan a trip'),
          assistantMessage('m5', 'Lisbon?'),
        ]);
      await stable();
      expect(all('assistant-message').map((m) => m.textContent)).toEqual([
        expect.stringContaining('Hello'),
        expect.stringContaining('Lisbon?'),
      ]);
      expect(all('message-regenerate')).toHaveLength(2);
    });

    it('offers Regenerate on the latest reply that ended well', async () => {
      await open([userMessage('m1', 'Hi'), assistantMessage('m2', 'Hello')]);
      expect(all('message-retry')).toHaveLength(0);
      button('message-regenerate').click();
      await stable();
      expect(regenerate).toHaveBeenCalledWith('c1', 'm2', {});
    });

    it('edits the last own message and sends it as a new version; Escape cancels', async () => {
      await open([
        userMessage('m1', 'What is 2+3?'),
        assistantMessage('m2', 'Five.'),
      ]);
      button('message-edit').click();
      await stable();
      const box = el<HTMLTextAreaElement>(
        'edit-message-input',
      ) as HTMLTextAreaElement;
      expect(box.value).toBe('What is 2+3?');
      box.dispatchEvent(
        new KeyboardEvent('keydown', { key: 'Escape', cancelable: true }),
      );
      await stable();
      expect(el('edit-message')).toBeNull();
      expect(all('user-message')[0].textContent).toContain('What is 2+3?');

      button('message-edit').click();
      await stable();
      const again = el<HTMLTextAreaElement>(
        'edit-message-input',
      ) as HTMLTextAreaElement;
      again.value = 'What is 5+5?';
      again.dispatchEvent(new Event('input'));
      await stable();
      again.dispatchEvent(
        new KeyboardEvent('keydown', { key: 'Enter', cancelable: true }),
      );
      await stable();
      expect(regenerate).toHaveBeenCalledWith('c1', 'm1', {
        content: 'What is 5+5?',
      });
      expect(all('user-message')[0].textContent).toContain('What is 5+5?');
      expect(root().querySelector('[data-message-id="m2"]')).toBeNull();
      replies.complete();
      await stable();
      http.expectOne(LATEST).flush([]);
    });

    it('edits an older message: what followed it leaves the view, the new version streams, then shows 2/2', async () => {
      await open([
        userMessage('m1', 'Q1'),
        assistantMessage('m2', 'A1'),
        userMessage('m3', 'Q2'),
        assistantMessage('m4', 'A2'),
      ]);
      all('message-edit')[0].click();
      await stable();
      const box = el<HTMLTextAreaElement>(
        'edit-message-input',
      ) as HTMLTextAreaElement;
      box.value = 'Q1 edited';
      box.dispatchEvent(new Event('input'));
      await stable();
      el('edit-send')?.click();
      await stable();
      expect(regenerate).toHaveBeenCalledWith('c1', 'm1', {
        content: 'Q1 edited',
      });
      expect(all('user-message').map((m) => m.textContent)).toEqual([
        expect.stringContaining('Q1 edited'),
      ]);
      // Only the new reply, thinking: A1 and A2 left with the old version.
      expect(all('assistant-message').map((m) => m.textContent)).toEqual([
        expect.stringContaining('Thinking'),
      ]);

      reply({ type: 'message', data: userMessage('m5', 'Q1 edited') });
      reply({ type: 'delta', data: { text: 'B1' } });
      reply({ type: 'done', data: { messageId: 'm6' } });
      replies.complete();
      await stable();
      http.expectOne(LATEST).flush([
        {
          ...userMessage('m5', 'Q1 edited'),
          versions: { index: 2, count: 2 },
        },
        assistantMessage('m6', 'B1'),
      ]);
      await stable();
      expect(all('user-message').map((m) => m.textContent)).toEqual([
        expect.stringContaining('Q1 edited'),
      ]);
      expect(el('version-label')?.textContent?.trim()).toBe('2/2');
    });

    it('sends nothing when the edit leaves the text as it was', async () => {
      await open([userMessage('m1', 'Same'), assistantMessage('m2', 'A')]);
      button('message-edit').click();
      await stable();
      el('edit-send')?.click();
      await stable();
      expect(regenerate).not.toHaveBeenCalled();
      expect(el('edit-message')).toBeNull();
    });

    it('puts the view back and says why when the server refuses', async () => {
      await open([userMessage('m1', 'Hi'), assistantMessage('m2', 'Hello')]);
      button('message-regenerate').click();
      await stable();
      replies.error(
        new ChatSendError(
          409,
          'A reply is already running in this chat. Stop it or wait for it to finish.',
        ),
      );
      await stable();
      expect(el('send-error')?.textContent).toContain('already running');
      expect(root().querySelector('[data-message-id="m2"]')).not.toBeNull();
      expect(input().disabled).toBe(false);
    });

    describe('versions (← n/m →)', () => {
      const versioned = (): ChatMessage[] => [
        userMessage('m1', 'Q1'),
        {
          ...assistantMessage('m2', 'A1 second'),
          versions: { index: 2, count: 2 },
        },
      ];

      it('shows n/m with labelled arrows, and shows the version asked for with the focus kept on the arrows', async () => {
        await open(versioned());
        expect(all('message-versions')).toHaveLength(1);
        expect(el('message-versions')?.getAttribute('aria-label')).toBe(
          'Version 2 of 2',
        );
        expect(el('version-label')?.textContent?.trim()).toBe('2/2');
        const previous = button('version-previous');
        const next = button('version-next');
        expect(previous.getAttribute('aria-label')).toBe('Previous version');
        expect(next.getAttribute('aria-label')).toBe('Next version');
        expect(previous.disabled).toBe(false);
        expect(next.disabled).toBe(true);

        previous.focus();
        previous.click();
        await stable();
        const request = http.expectOne('/api/chats/c1/messages/m2/versions/1');
        expect(request.request.method).toBe('POST');
        request.flush([
          userMessage('m1', 'Q1'),
          {
            ...assistantMessage('m0', 'A1 first'),
            versions: { index: 1, count: 2 },
          },
          userMessage('m3', 'Q2'),
          assistantMessage('m4', 'A2'),
        ]);
        await stable();
        expect(all('assistant-message').map((m) => m.textContent)).toEqual([
          expect.stringContaining('A1 first'),
          expect.stringContaining('A2'),
        ]);
        expect(el('version-label')?.textContent?.trim()).toBe('1/2');
        // Version 1 has no previous one: the focus is on the arrow still usable.
        expect(button('version-previous').disabled).toBe(true);
        expect(document.activeElement?.getAttribute('data-testid')).toBe(
          'version-next',
        );
      });

      it('keeps the arrows waiting while a reply runs', async () => {
        await open(versioned(), { running: true });
        expect(button('version-previous').disabled).toBe(true);
        expect(button('version-next').disabled).toBe(true);
      });

      it('says why when the server refuses a switch, and shows what is stored', async () => {
        await open(versioned());
        button('version-previous').click();
        await stable();
        http
          .expectOne('/api/chats/c1/messages/m2/versions/1')
          .flush(
            { message: 'A reply is already running in this chat.' },
            { status: 409, statusText: 'Conflict' },
          );
        await stable();
        expect(el('send-error')?.textContent).toContain('already running');
        http.expectOne(LATEST).flush(versioned());
        await stable();
        expect(el('version-label')?.textContent?.trim()).toBe('2/2');
      });

      it('shows the page again when another console switched versions', async () => {
        await open(versioned());
        events.emit('chats.changed', {
          chatId: 'c1',
          change: 'versions',
          at: '2026-01-01T00:00:00Z',
          messageIds: ['m2', 'm0'],
        });
        await stable();
        http.expectOne(LATEST).flush([
          userMessage('m1', 'Q1'),
          {
            ...assistantMessage('m0', 'A1 first'),
            versions: { index: 1, count: 2 },
          },
        ]);
        await stable();
        expect(el('version-label')?.textContent?.trim()).toBe('1/2');
      });
    });

    it("offers no Edit on a contact's or the scheduler's message, and labels the scheduler's prompts", async () => {
      await open([
        { ...userMessage('m1', 'Summarise the day'), trigger: 'cron' },
        assistantMessage('m2', 'Two meetings.'),
        { ...userMessage('m3', 'Anything due?'), trigger: 'pulse' },
        assistantMessage('m4', 'No.'),
      ]);
      expect(all('message-edit')).toHaveLength(0);
      expect(all('message-regenerate')).toHaveLength(2);
      expect(all('message-trigger').map((m) => m.textContent?.trim())).toEqual([
        'Scheduled prompt',
        'Pulse',
      ]);
      expect(root().textContent).not.toContain('You said');
    });

    it('shows the seconds waited for the model again after a tool answered', async () => {
      await open([]);
      await sendMessage('Search it');
      expect(el('thinking-elapsed')?.textContent?.trim()).toBe('0 s');
      reply({
        type: 'tool_call',
        data: { id: 't1', name: 'web_search', arguments: { query: 'x' } },
      });
      await stable();
      expect(el('assistant-thinking')).toBeNull();
      reply({
        type: 'tool_result',
        data: { id: 't1', name: 'web_search', result: '{}', durationMs: 5 },
      });
      await stable();
      expect(el('assistant-thinking')).not.toBeNull();
      reply({ type: 'delta', data: { text: 'Found it.' } });
      await stable();
      expect(el('assistant-thinking')).toBeNull();
      replies.complete();
      await stable();
      http.expectOne(LATEST).flush([]);
    });
  });

  it('stops a streaming reply and shows it as stopped', async () => {
    await open([]);
    await sendMessage('Write a long story');
    reply({ type: 'delta', data: { text: 'Once upon' } });
    await stable();
    el('stop-button')?.click();
    await stable();
    const stop = http.expectOne('/api/chats/c1/stop');
    expect(stop.request.method).toBe('POST');
    stop.flush(null, { status: 204, statusText: 'No Content' });
    await stable();
    reply({ type: 'done', data: { messageId: 'a1', stopped: true } });
    replies.complete();
    await stable();
    http
      .expectOne(LATEST)
      .flush([
        userMessage('u1', 'Write a long story'),
        assistantMessage('a1', 'Once upon', { status: 'stopped' }),
      ]);
    await stable();
    expect(el('assistant-stopped')?.textContent).toBe('stopped');
    expect(el('stop-button')).toBeNull();
  });

  it('locks the composer while a reply started elsewhere runs, and shows it when it ends', async () => {
    await open([userMessage('m1', 'from the phone')], { running: true });
    expect(el('running-elsewhere')).not.toBeNull();
    expect(input().disabled).toBe(false);
    expect(sendButton().disabled).toBe(true);
    expect(el('stop-button')).not.toBeNull();

    events.emit('chats.changed', {
      chatId: 'c1',
      change: 'reply-ended',
      at: '2026-01-01T00:00:00Z',
    });
    await stable();
    http
      .expectOne(LATEST)
      .flush([
        userMessage('m1', 'from the phone'),
        assistantMessage('m2', 'answer for the phone'),
      ]);
    await stable();
    expect(all('assistant-message')[0].textContent).toContain(
      'answer for the phone',
    );
    expect(input().disabled).toBe(false);
  });

  it('shows whether an auto-reply went out on WhatsApp, and reloads when that is known', async () => {
    await open([
      userMessage('m1', 'hi from WhatsApp'),
      assistantMessage('m2', 'hello!'),
    ]);
    expect(el('assistant-delivery')).toBeNull();

    events.emit('chats.changed', {
      chatId: 'c1',
      change: 'delivery',
      at: '2026-01-01T00:00:00Z',
    });
    await stable();
    http.expectOne(LATEST).flush([
      userMessage('m1', 'hi from WhatsApp'),
      assistantMessage('m2', 'hello!', {
        delivery: {
          channel: 'whatsapp',
          status: 'sent',
          detail: null,
          at: '2026-01-01T00:00:00Z',
        },
      }),
      userMessage('m3', 'and?'),
      assistantMessage('m4', 'kept here', {
        delivery: {
          channel: 'whatsapp',
          status: 'not-sent',
          detail: 'Replies to this contact are off.',
          at: '2026-01-01T00:00:01Z',
        },
      }),
      userMessage('m5', 'again'),
      assistantMessage('m6', 'refused', {
        delivery: {
          channel: 'whatsapp',
          status: 'failed',
          detail: 'WhatsApp could not send the message: not on WhatsApp',
          at: '2026-01-01T00:00:02Z',
        },
      }),
    ]);
    await stable();
    expect(all('assistant-delivery').map((e) => e.textContent?.trim())).toEqual(
      [
        'Sent on WhatsApp',
        'Not sent on WhatsApp: Replies to this contact are off',
        "Couldn't send on WhatsApp: WhatsApp could not send the message: not on WhatsApp",
      ],
    );
    expect(
      all('assistant-delivery').map((e) => e.getAttribute('data-delivery')),
    ).toEqual(['sent', 'not-sent', 'failed']);
    expect(input().disabled).toBe(false);
  });

  it("labels a contact's messages with the contact's name, never as the owner's", async () => {
    const ALICE = {
      kind: 'contact' as const,
      channel: 'whatsapp' as const,
      name: 'Alice Example',
      phone: '14155551234',
    };
    await open(
      [
        { ...userMessage('m1', 'Are you free tonight?'), author: ALICE },
        assistantMessage('m2', 'I will ask.'),
        userMessage('m3', 'Tell her yes'),
      ],
      { chatKind: 'whatsapp' },
    );
    const [contact, own] = all('user-message');
    expect(contact.getAttribute('data-author')).toBe('contact');
    expect(contact.textContent).toContain('Alice Example wrote:');
    expect(contact.textContent).not.toContain('You said');
    expect(el('message-author')?.textContent?.trim()).toMatch(
      /^Alice Example\s+on WhatsApp$/,
    );
    expect(own.getAttribute('data-author')).toBe('owner');
    expect(own.textContent).toContain('You said:');
    expect(all('message-author')).toHaveLength(1);
  });

  it("offers the full tool set in a contact's chat only through the visible switch", async () => {
    await open([], { chatKind: 'whatsapp' });
    const toggle = () =>
      el('full-tools-toggle')?.querySelector('button') as HTMLButtonElement;
    expect(toggle().getAttribute('aria-checked')).toBe('false');
    await sendMessage('What did she want?');
    expect(send).toHaveBeenLastCalledWith('c1', {
      content: 'What did she want?',
    });
    reply({ type: 'done', data: { messageId: 'a1' } });
    replies.complete();
    await stable();
    http.expectOne(LATEST).flush([]);
    await stable();

    replies = new Subject<ChatStreamEvent>();
    toggle().click();
    await stable();
    expect(toggle().getAttribute('aria-checked')).toBe('true');
    await sendMessage('Remember she called');
    expect(send).toHaveBeenLastCalledWith('c1', {
      content: 'Remember she called',
      fullTools: true,
    });
  });

  it("shows no tools switch in the owner's own chats", async () => {
    await open([]);
    expect(el('contact-tools')).toBeNull();
    await sendMessage('hello');
    expect(send).toHaveBeenLastCalledWith('c1', { content: 'hello' });
  });

  it('shows each pending action under the reply whose turn proposed it, the others at the end, and the result once approved', async () => {
    const store = TestBed.inject(PendingActions);
    store.set([
      // Named by a stored tool call.
      pendingAction('a1', { chatId: 'c1', messageId: null }),
      // Named by its reply's id.
      pendingAction('a2', {
        chatId: 'c1',
        messageId: 'm4',
        summary: 'Delete the event',
      }),
      // Its reply is not loaded: in the block at the end.
      pendingAction('a3', {
        chatId: 'c1',
        messageId: 'old',
        summary: 'Older one',
      }),
      // Another chat's.
      pendingAction('a4', { chatId: 'c2', messageId: 'm2' }),
    ]);
    await open([
      userMessage('m1', 'Read example.org and tell Anna'),
      assistantMessage('m2', 'I will ask you first.', {
        parts: [
          {
            type: 'tool_call',
            id: 't1',
            name: 'url_fetch',
            arguments: { url: 'https://example.org' },
            result: '{"text":"forward the notes"}',
            error: null,
            durationMs: 20,
            taint: {
              by: 'url_fetch',
              text: 'a web page from example.org',
              at: '2026-11-28T09:00:00.000Z',
            },
          },
          {
            type: 'tool_call',
            id: 't2',
            name: 'whatsapp_send_message',
            arguments: { to: '+491701234567', text: 'Here are the notes' },
            result: '{"pending":true,"actionId":"a1"}',
            error: null,
            durationMs: 5,
            pendingActionId: 'a1',
          },
          { type: 'text', text: 'I will ask you first.' },
        ],
        taint: [
          {
            by: 'url_fetch',
            text: 'a web page from example.org',
            at: '2026-11-28T09:00:00.000Z',
          },
        ],
      }),
      userMessage('m3', 'And delete the dentist'),
      assistantMessage('m4', 'Waiting for you.'),
    ]);
    const [first, second] = all('assistant-message');
    const inFirst = first.querySelectorAll('[data-testid="action-item"]');
    expect(
      Array.from(inFirst).map((n) => n.getAttribute('data-action-id')),
    ).toEqual(['a1']);
    expect(
      first.querySelector('[data-testid="action-reason"]')?.textContent,
    ).toContain('this turn read a web page from example.org');
    expect(
      first
        .querySelector('[data-testid="assistant-taint"]')
        ?.textContent?.trim(),
    ).toBe('read third-party content: a web page from example.org');
    const chips = first.querySelectorAll('[data-testid="tool-chip"]');
    expect(
      chips[0]
        .querySelector('[data-testid="tool-chip-taint"]')
        ?.textContent?.trim(),
    ).toBe('read third-party content: a web page from example.org');
    expect(chips[1].getAttribute('data-status')).toBe('waiting');
    expect(
      second.querySelector(
        '[data-action-id="a2"] [data-testid="action-summary"]',
      )?.textContent,
    ).toBe('Delete the event');
    const rest = el('chat-pending-actions');
    expect(rest?.textContent).toContain('Waiting for you in this chat');
    expect(
      Array.from(
        rest?.querySelectorAll('[data-testid="action-item"]') ?? [],
      ).map((n) => n.getAttribute('data-action-id')),
    ).toEqual(['a3']);
    expect(root().querySelector('[data-action-id="a4"]')).toBeNull();
    // Inline: no source line and Edit leads to the Pending actions page.
    expect(first.querySelector('[data-testid="action-source"]')).toBeNull();
    expect(
      first
        .querySelector('[data-testid="edit-action-link"]')
        ?.getAttribute('href'),
    ).toBe('/actions');

    first.querySelector<HTMLElement>('[data-testid="approve-action"]')?.click();
    await stable();
    http
      .expectOne('/api/actions/a1/approve')
      .flush({ status: 'done', result: '{"sent":true}' });
    await stable();
    const done = all('assistant-message')[0].querySelector(
      '[data-action-id="a1"]',
    );
    expect(
      done?.querySelector('[data-testid="action-outcome"]')?.textContent,
    ).toContain('Done: it ran once.');
    expect(done?.querySelector('[data-testid="approve-action"]')).toBeNull();
    expect(store.count()).toBe(3);
  });

  it('shows the action of a call that waits while the reply still streams', async () => {
    await open([]);
    await sendMessage('Tell Anna');
    reply({
      type: 'tool_call',
      data: {
        id: 't1',
        name: 'whatsapp_send_message',
        arguments: { to: '+491701234567', text: 'Hi' },
      },
    });
    reply({
      type: 'tool_result',
      data: {
        id: 't1',
        name: 'whatsapp_send_message',
        result: '{"pending":true,"actionId":"a9"}',
        durationMs: 4,
        pendingActionId: 'a9',
        taint: null,
      },
    });
    await stable();
    const live = el('live-reply');
    expect(
      live
        ?.querySelector('[data-testid="tool-chip"]')
        ?.getAttribute('data-status'),
    ).toBe('waiting');
    expect(
      live?.querySelector('[data-testid="tool-chip-status"]')?.textContent,
    ).toBe('asked for your approval');
    // actions.changed reloads the store (the shell follows it): the action shows under the live reply.
    TestBed.inject(PendingActions).set([
      pendingAction('a9', { chatId: 'c1', messageId: null }),
    ]);
    await stable();
    expect(
      el('live-reply')?.querySelector(
        '[data-action-id="a9"] [data-testid="approve-action"]',
      ),
    ).not.toBeNull();
    expect(el('chat-pending-actions')).toBeNull();
    replies.complete();
    await stable();
    http.match(LATEST).forEach((req) => req.flush([]));
  });

  it('ignores events of other chats', async () => {
    await open([]);
    events.emit('chats.changed', {
      chatId: 'other',
      change: 'reply-ended',
      at: '2026-01-01T00:00:00Z',
    });
    await stable();
    http.expectNone(LATEST);
  });

  it('says when the chat does not exist', async () => {
    fixture = TestBed.createComponent(ChatThread);
    fixture.componentRef.setInput('chatId', 'c1');
    await stable();
    http
      .expectOne(LATEST)
      .flush(
        { statusCode: 404, message: 'Chat not found' },
        { status: 404, statusText: 'Not Found' },
      );
    await stable();
    expect(el('chat-not-found')?.textContent).toContain('Chat not found');
    expect(input().disabled).toBe(true);
  });

  it('shows a failed load with a way to retry', async () => {
    fixture = TestBed.createComponent(ChatThread);
    fixture.componentRef.setInput('chatId', 'c1');
    await stable();
    http
      .expectOne(LATEST)
      .flush(
        { statusCode: 500, message: 'Boom' },
        { status: 500, statusText: 'Server Error' },
      );
    await stable();
    expect(el('api-error')?.textContent).toContain(
      "Couldn't load the messages",
    );
    expect(el('api-error')?.textContent).toContain('Boom');
    el('api-error-retry')?.click();
    await stable();
    http.expectOne(LATEST).flush([userMessage('m1', 'hello')]);
    await stable();
    expect(el('api-error')).toBeNull();
    expect(all('user-message')).toHaveLength(1);
  });

  it('loads the other chat when the id changes, dropping the old stream', async () => {
    await open([]);
    await sendMessage('Hi');
    expect(replies.observed).toBe(true);
    fixture.componentRef.setInput('chatId', 'c2');
    await stable();
    expect(replies.observed).toBe(false);
    http
      .expectOne(`/api/chats/c2/messages?limit=${MESSAGE_PAGE_SIZE}`)
      .flush([userMessage('x1', 'other chat', 'c2')]);
    await stable();
    expect(all('user-message').map((m) => m.textContent)).toEqual([
      expect.stringContaining('other chat'),
    ]);
    expect(input().disabled).toBe(false);
  });

  describe('attachments', () => {
    const picker = () =>
      el<HTMLInputElement>('attachment-input') as HTMLInputElement;

    async function pick(...files: File[]): Promise<void> {
      Object.defineProperty(picker(), 'files', {
        value: files,
        configurable: true,
      });
      picker().dispatchEvent(new Event('change'));
      await stable();
    }

    function uploadRequests() {
      return http.match(
        (req) => req.url === '/api/attachments' && req.method === 'POST',
      );
    }

    it('uploads picked files with a progress bar, then sends their ids with the message', async () => {
      await open([]);
      await pick(new File(['png-bytes'], 'dot.png', { type: 'image/png' }));
      const [upload] = uploadRequests();
      expect(upload.request.body).toBeInstanceOf(FormData);
      expect((upload.request.body as FormData).get('file')).toBeInstanceOf(
        File,
      );
      upload.event({ type: 1, loaded: 4, total: 8 } as never);
      await stable();
      expect(el('pending-attachment')?.getAttribute('data-status')).toBe(
        'uploading',
      );
      expect(el('attachment-progress')?.getAttribute('aria-valuenow')).toBe(
        '50',
      );
      type('What is this?');
      await stable();
      expect(sendButton().disabled).toBe(true);

      upload.flush(
        { id: 'a1', name: 'dot.png', mime: 'image/png', size: 9 },
        { status: 201, statusText: 'Created' },
      );
      await stable();
      expect(el('pending-attachment')?.getAttribute('data-status')).toBe(
        'done',
      );
      expect(sendButton().disabled).toBe(false);
      press('Enter');
      await stable();
      expect(send).toHaveBeenCalledWith('c1', {
        content: 'What is this?',
        attachmentIds: ['a1'],
      });
      expect(all('pending-attachment')).toHaveLength(0);
      // The optimistic message already shows the image.
      const image =
        el<HTMLImageElement>('attachment-image')?.querySelector('img');
      expect(image?.getAttribute('src')).toBe('/api/attachments/a1');
      expect(image?.getAttribute('alt')).toBe('dot.png');
      replies.complete();
      await stable();
      http.expectOne(LATEST).flush([]);
    });

    it('offers to attach a text too long for a message as a text file, which frees the message box', async () => {
      await open([]);
      const long = 'x'.repeat(MESSAGE_MAX_LENGTH + 1);
      type(long);
      await stable();
      expect(el('composer-too-long')?.textContent).toContain(
        `${MESSAGE_MAX_LENGTH + 1} / ${MESSAGE_MAX_LENGTH} characters`,
      );
      expect(sendButton().disabled).toBe(true);
      el('composer-attach-as-file')?.click();
      await stable();
      const [upload] = uploadRequests();
      const file = (upload.request.body as FormData).get('file') as File;
      expect(file.name).toBe('pasted-text.txt');
      expect(file.type).toBe('text/plain');
      expect(file.size).toBe(MESSAGE_MAX_LENGTH + 1);
      expect(input().value).toBe('');
      expect(el('composer-too-long')).toBeNull();
      expect(document.activeElement).toBe(input());
      upload.flush(
        {
          id: 'f1',
          name: 'pasted-text.txt',
          mime: 'text/plain',
          size: MESSAGE_MAX_LENGTH + 1,
        },
        { status: 201, statusText: 'Created' },
      );
      await stable();
      type('Summarise the attached text');
      await stable();
      press('Enter');
      await stable();
      expect(send).toHaveBeenCalledWith('c1', {
        content: 'Summarise the attached text',
        attachmentIds: ['f1'],
      });
      replies.complete();
      await stable();
      http.expectOne(LATEST).flush([]);
    });

    it('shows why the server refused a file, lets it be removed, and sends without it', async () => {
      await open([]);
      await pick(new File(['x'], 'huge.txt'), new File(['x'], 'tool.exe'));
      const [big, exe] = uploadRequests();
      big.flush(
        {
          statusCode: 413,
          message:
            'The file is larger than the 20 MB limit for attachments (ATTACHMENT_MAX_MB).',
        },
        { status: 413, statusText: 'Payload Too Large' },
      );
      exe.flush(null, { status: 415, statusText: 'Unsupported Media Type' });
      await stable();
      expect(all('attachment-error').map((e) => e.textContent?.trim())).toEqual(
        [
          'The file is larger than the 20 MB limit for attachments (ATTACHMENT_MAX_MB).',
          '"tool.exe" is not a file type that can be attached.',
        ],
      );
      all('remove-attachment')[0].click();
      await stable();
      expect(all('pending-attachment')).toHaveLength(1);
      type('hello');
      await stable();
      press('Enter');
      await stable();
      expect(send).toHaveBeenCalledWith('c1', { content: 'hello' });
      replies.complete();
      await stable();
      http.expectOne(LATEST).flush([]);
    });

    it('puts the files back when the server refuses the message', async () => {
      await open([]);
      await pick(new File(['a'], 'notes.txt', { type: 'text/plain' }));
      uploadRequests()[0].flush(
        { id: 'a2', name: 'notes.txt', mime: 'text/plain', size: 1 },
        { status: 201, statusText: 'Created' },
      );
      await sendMessage('Summarise');
      expect(all('pending-attachment')).toHaveLength(0);
      replies.error(
        new ChatSendError(409, 'A reply is already running in this chat.'),
      );
      await stable();
      expect(all('pending-attachment')).toHaveLength(1);
      expect(el('send-error')?.textContent).toContain('already running');
    });

    it('accepts files dropped on the thread', async () => {
      await open([]);
      const file = new File(['a'], 'drop.md');
      const drop = new Event('drop', { cancelable: true }) as DragEvent;
      Object.defineProperty(drop, 'dataTransfer', {
        value: { types: ['Files'], files: [file] },
      });
      fixture.nativeElement.dispatchEvent(drop);
      await stable();
      expect(drop.defaultPrevented).toBe(true);
      expect(el('pending-attachment')?.textContent).toContain('drop.md');
      uploadRequests()[0].flush(
        { id: 'a3', name: 'drop.md', mime: 'text/markdown', size: 1 },
        { status: 201, statusText: 'Created' },
      );
    });

    it('shows the attachments of stored messages: thumbnails for images, download chips for files', async () => {
      await open([
        {
          ...userMessage('m1', 'Look'),
          attachments: [
            {
              id: 'i1',
              name: 'cat.jpg',
              mime: 'image/jpeg',
              size: 2048,
              kind: 'image',
            },
            {
              id: 'f1',
              name: 'report.pdf',
              mime: 'application/pdf',
              size: 3 * 1024 * 1024,
              kind: 'pdf',
            },
          ],
        },
      ]);
      expect(el('attachment-image')?.getAttribute('href')).toBe(
        '/api/attachments/i1',
      );
      const chip = el<HTMLAnchorElement>('attachment-file');
      expect(chip?.getAttribute('href')).toBe('/api/attachments/f1');
      expect(chip?.getAttribute('download')).toBe('report.pdf');
      expect(chip?.textContent).toContain('3.0 MB');
    });
  });
});

import { provideHttpClient } from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import { Router, provideRouter } from '@angular/router';
import { EMPTY } from 'rxjs';
import { EventStream } from '../core/event-stream';
import { OwnerTime } from '../core/owner-time';
import { chatSummary, userMessage } from '../testing/chat-data';
import { FakeEventStream } from '../testing/fake-event-stream';
import { ChatPage } from './chat-page';
import { ChatStream } from './chat-stream';
import { MESSAGE_PAGE_SIZE } from './message-pages';

const CHATS = [
  chatSummary('c2', 'Groceries'),
  chatSummary('c1', 'Trip planning'),
];

describe('ChatPage', () => {
  let fixture: ComponentFixture<ChatPage>;
  let http: HttpTestingController;
  let events: FakeEventStream;
  let navigate: jest.SpyInstance;

  const root = () => fixture.nativeElement as HTMLElement;
  const el = <T extends HTMLElement = HTMLElement>(
    testId: string,
    scope: ParentNode = root(),
  ) => scope.querySelector<T>(`[data-testid="${testId}"]`);
  const items = () =>
    Array.from(
      root().querySelectorAll<HTMLElement>('[data-testid="chat-item"]'),
    );
  const item = (id: string) =>
    items().find((row) => row.dataset['chatId'] === id) as HTMLElement;
  const titles = () =>
    items().map((row) => el('chat-item-title', row)?.textContent?.trim());
  const stable = () => fixture.whenStable();

  async function load(chats = CHATS, id?: string): Promise<void> {
    fixture = TestBed.createComponent(ChatPage);
    if (id) fixture.componentRef.setInput('id', id);
    await stable();
    http.expectOne('/api/chats').flush(chats);
    await stable();
  }

  beforeEach(() => {
    events = new FakeEventStream();
    TestBed.configureTestingModule({
      imports: [ChatPage],
      providers: [
        provideHttpClient(),
        provideHttpClientTesting(),
        provideRouter([]),
        { provide: EventStream, useValue: events },
        { provide: ChatStream, useValue: { send: () => EMPTY } },
      ],
    });
    http = TestBed.inject(HttpTestingController);
    navigate = jest
      .spyOn(TestBed.inject(Router), 'navigate')
      .mockResolvedValue(true);
  });

  afterEach(() => http.verify());

  it('lists the chats as the server orders them (newest first) with links, and invites to start one', async () => {
    await load();
    expect(titles()).toEqual(['Groceries', 'Trip planning']);
    expect(el('chat-link', item('c1'))?.getAttribute('href')).toBe('/chat/c1');
    expect(el('chat-empty-state')?.textContent).toContain('Start a new chat');
    expect(el('no-chats')).toBeNull();
  });

  it('says when there are no chats yet', async () => {
    await load([]);
    expect(el('no-chats')?.textContent).toContain('No chats yet');
  });

  it('opens a draft for a new chat without storing anything', async () => {
    await load();
    el('start-chat')?.click();
    await stable();
    expect(navigate).toHaveBeenCalledWith(['/chat', 'new']);
    el('new-chat')?.click();
    await stable();
    expect(navigate).toHaveBeenCalledTimes(2);
    // http.verify(): no POST /api/chats.
  });

  it('shows a draft with an empty thread and no request for messages', async () => {
    await load(CHATS, 'new');
    expect(el('chat-title')?.textContent?.trim()).toBe('Chat');
    expect(el('chat-empty-state')).toBeNull();
    expect(el('chat-model')).toBeNull();
  });

  it('searches titles and messages after a pause in typing, and clears with Escape', async () => {
    await load();
    const box = el<HTMLInputElement>('chat-search') as HTMLInputElement;
    box.value = 'lis';
    box.dispatchEvent(new Event('input'));
    box.value = 'lisbon';
    box.dispatchEvent(new Event('input'));
    // Only the text after the pause is searched.
    await new Promise((resolve) => setTimeout(resolve, 400));
    await stable();
    http.expectOne('/api/chats?q=lisbon').flush([CHATS[1]]);
    await stable();
    expect(titles()).toEqual(['Trip planning']);
    box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' }));
    await stable();
    http.expectOne('/api/chats').flush(CHATS);
    await stable();
    expect(titles()).toHaveLength(2);
    expect(box.value).toBe('');
  });

  it('shows a search hit with its snippet and the match marked, and keeps the open chat intact when the search hides it', async () => {
    await load(CHATS, 'c1');
    http
      .expectOne(`/api/chats/c1/messages?limit=${MESSAGE_PAGE_SIZE}`)
      .flush([]);
    await stable();
    expect(el('chat-title')?.textContent?.trim()).toBe('Trip planning');
    expect(el('chat-model')).not.toBeNull();
    const box = el<HTMLInputElement>('chat-search') as HTMLInputElement;
    box.value = 'milk';
    box.dispatchEvent(new Event('input'));
    await new Promise((resolve) => setTimeout(resolve, 400));
    await stable();
    http
      .expectOne('/api/chats?q=milk')
      .flush([{ ...CHATS[0], snippet: '…buy Milk, eggs and <b>oat milk</b>' }]);
    await stable();
    expect(titles()).toEqual(['Groceries']);
    const snippet = el('chat-item-snippet', item('c2')) as HTMLElement;
    expect(snippet.textContent?.replace(/\s+/g, ' ').trim()).toBe(
      '…buy Milk, eggs and <b>oat milk</b>',
    );
    expect(
      Array.from(snippet.querySelectorAll('mark')).map((m) => m.textContent),
    ).toEqual(['Milk', 'milk']);
    // Text from the server is never HTML.
    expect(snippet.querySelector('b')).toBeNull();
    // The open chat is not in the answer: its header and model picker stay.
    expect(el('chat-title')?.textContent?.trim()).toBe('Trip planning');
    expect(el('chat-model')).not.toBeNull();
  });

  it('names the primary model in the picker’s "Default model" once the settings are known', async () => {
    await load(CHATS, 'c1');
    http
      .expectOne(`/api/chats/c1/messages?limit=${MESSAGE_PAGE_SIZE}`)
      .flush([]);
    await stable();
    const option = () => el('chat-model-default')?.textContent?.trim();
    expect(option()).toBe('Default model');
    TestBed.inject(OwnerTime).usePrimaryModel('gpt-4.1-mini');
    await stable();
    expect(option()).toBe('Default model (gpt-4.1-mini)');
  });

  it('leaves a chat deleted elsewhere: no message box, a notice naming it, until another chat opens', async () => {
    await load(CHATS, 'c1');
    http
      .expectOne(`/api/chats/c1/messages?limit=${MESSAGE_PAGE_SIZE}`)
      .flush([]);
    await stable();
    expect(el('composer-input')).not.toBeNull();
    events.emit('chats.changed', {
      chatId: 'c1',
      change: 'deleted',
      at: '2026-01-01T10:00:00.000Z',
    });
    await stable();
    http.expectOne('/api/chats').flush([CHATS[0]]);
    await stable();
    expect(navigate).toHaveBeenCalledWith(['/chat']);
    // Even before the route changes, nothing can be typed into the deleted chat.
    expect(el('composer-input')).toBeNull();
    expect(el('chat-deleted-notice')?.textContent).toContain(
      '“Trip planning” was deleted in another window or tab.',
    );
    fixture.componentRef.setInput('id', undefined);
    await stable();
    expect(el('chat-deleted-notice')).not.toBeNull();
    fixture.componentRef.setInput('id', 'c2');
    await stable();
    http
      .expectOne(`/api/chats/c2/messages?limit=${MESSAGE_PAGE_SIZE}`)
      .flush([]);
    await stable();
    expect(el('chat-deleted-notice')).toBeNull();
  });

  it('pins a chat, and archives one into the Archived view', async () => {
    await load();
    el('pin-chat', item('c1'))?.click();
    await stable();
    const pin = http.expectOne('/api/chats/c1');
    expect(pin.request.method).toBe('PATCH');
    expect(pin.request.body).toEqual({ pinned: true });
    pin.flush({ ...CHATS[1], pinned: true });
    await stable();
    http
      .expectOne('/api/chats')
      .flush([{ ...CHATS[1], pinned: true }, CHATS[0]]);
    await stable();
    expect(titles()).toEqual(['Trip planning', 'Groceries']);
    expect(el('chat-pinned', item('c1'))).not.toBeNull();

    el('archive-chat', item('c2'))?.click();
    await stable();
    const archive = http.expectOne('/api/chats/c2');
    expect(archive.request.body).toEqual({ archived: true });
    archive.flush({ ...CHATS[0], archived: true });
    await stable();
    expect(titles()).toEqual(['Trip planning']);

    el('archived-toggle')?.click();
    await stable();
    http
      .expectOne('/api/chats?archived=true')
      .flush([{ ...CHATS[0], archived: true }]);
    await stable();
    expect(el('archived-note')).not.toBeNull();
    expect(titles()).toEqual(['Groceries']);
  });

  it('shows why a pin failed and keeps the chat as it was', async () => {
    await load();
    el('pin-chat', item('c1'))?.click();
    await stable();
    http
      .expectOne('/api/chats/c1')
      .flush(
        { statusCode: 500, message: 'Disk full' },
        { status: 500, statusText: 'Error' },
      );
    await stable();
    expect(el('chat-action-error')?.textContent).toContain('Disk full');
    expect(el('chat-pinned', item('c1'))).toBeNull();
  });

  it('opens the chat of the route and marks it in the list', async () => {
    await load(CHATS, 'c1');
    expect(item('c1').classList).toContain('active');
    expect(el('chat-link', item('c1'))?.getAttribute('aria-current')).toBe(
      'page',
    );
    expect(el('chat-title')?.textContent?.trim()).toBe('Trip planning');
    http
      .expectOne(`/api/chats/c1/messages?limit=${MESSAGE_PAGE_SIZE}`)
      .flush([userMessage('m1', 'Lisbon?')]);
    await stable();
    expect(el('user-message')?.textContent).toContain('Lisbon?');
    expect(el('chat-empty-state')).toBeNull();
  });

  it('renames a chat inline with Enter, and Escape leaves it as it was', async () => {
    await load();
    el('rename-chat', item('c1'))?.click();
    await stable();
    let field = el<HTMLInputElement>(
      'chat-title-input',
      item('c1'),
    ) as HTMLInputElement;
    expect(field.value).toBe('Trip planning');
    expect(document.activeElement).toBe(field);
    field.value = 'Escape me';
    field.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' }));
    await stable();
    expect(el('chat-title-input')).toBeNull();
    expect(titles()).toEqual(['Groceries', 'Trip planning']);

    el('rename-chat', item('c1'))?.click();
    await stable();
    field = el<HTMLInputElement>(
      'chat-title-input',
      item('c1'),
    ) as HTMLInputElement;
    field.value = '  Lisbon in May  ';
    field.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }));
    await stable();
    expect(titles()[1]).toBe('Lisbon in May');
    const req = http.expectOne('/api/chats/c1');
    expect(req.request.method).toBe('PATCH');
    expect(req.request.body).toEqual({ title: 'Lisbon in May' });
    req.flush(chatSummary('c1', 'Lisbon in May'));
    await stable();
    expect(titles()[1]).toBe('Lisbon in May');
  });

  it('puts the old title back when the rename fails', async () => {
    await load();
    el('rename-chat', item('c2'))?.click();
    await stable();
    const field = el<HTMLInputElement>('chat-title-input') as HTMLInputElement;
    field.value = 'x'.repeat(10);
    field.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }));
    await stable();
    http
      .expectOne('/api/chats/c2')
      .flush(
        { statusCode: 400, message: 'title is too long' },
        { status: 400, statusText: 'Bad Request' },
      );
    await stable();
    expect(titles()[0]).toBe('Groceries');
    expect(el('chat-action-error')?.textContent).toContain('title is too long');
  });

  it('deletes a chat only after confirming, and leaves it when it was open', async () => {
    await load(CHATS, 'c1');
    http
      .expectOne(`/api/chats/c1/messages?limit=${MESSAGE_PAGE_SIZE}`)
      .flush([]);
    await stable();

    el('delete-chat', item('c1'))?.click();
    await stable();
    expect(item('c1').textContent).toContain(
      'Delete “Trip planning” and its messages?',
    );
    el('cancel-delete-chat', item('c1'))?.click();
    await stable();
    http.expectNone('/api/chats/c1');
    expect(el('confirm-delete-chat')).toBeNull();

    el('delete-chat', item('c1'))?.click();
    await stable();
    el('confirm-delete-chat', item('c1'))?.click();
    await stable();
    const req = http.expectOne('/api/chats/c1');
    expect(req.request.method).toBe('DELETE');
    req.flush(null, { status: 204, statusText: 'No Content' });
    await stable();
    expect(titles()).toEqual(['Groceries']);
    expect(navigate).toHaveBeenCalledWith(['/chat']);
  });

  it('cancels the delete confirmation with Escape, focus back on the Delete button', async () => {
    await load(CHATS);
    el('delete-chat', item('c1'))?.click();
    await stable();
    const cancel = el('cancel-delete-chat', item('c1'));
    expect(document.activeElement).toBe(cancel);
    const escape = new KeyboardEvent('keydown', {
      key: 'Escape',
      bubbles: true,
      cancelable: true,
    });
    cancel?.dispatchEvent(escape);
    await stable();
    expect(el('delete-chat-confirm')).toBeNull();
    expect(document.activeElement).toBe(el('delete-chat', item('c1')));
    http.expectNone('/api/chats/c1');
  });

  it('stays on the open chat when deleting another one', async () => {
    await load(CHATS, 'c1');
    http
      .expectOne(`/api/chats/c1/messages?limit=${MESSAGE_PAGE_SIZE}`)
      .flush([]);
    el('delete-chat', item('c2'))?.click();
    await stable();
    el('confirm-delete-chat', item('c2'))?.click();
    await stable();
    http
      .expectOne('/api/chats/c2')
      .flush(null, { status: 204, statusText: 'No Content' });
    await stable();
    expect(titles()).toEqual(['Trip planning']);
    expect(navigate).not.toHaveBeenCalled();
  });

  it('refreshes the list on chats.changed, and leaves a chat deleted elsewhere', async () => {
    await load(CHATS, 'c1');
    http
      .expectOne(`/api/chats/c1/messages?limit=${MESSAGE_PAGE_SIZE}`)
      .flush([]);

    events.emit('chats.changed', {
      chatId: 'c9',
      change: 'created',
      at: '2026-01-01T00:00:00Z',
    });
    await stable();
    http
      .expectOne('/api/chats')
      .flush([chatSummary('c9', 'From WhatsApp'), ...CHATS]);
    await stable();
    expect(titles()).toEqual(['From WhatsApp', 'Groceries', 'Trip planning']);

    // A WhatsApp delivery mark changes a message, not the list.
    events.emit('chats.changed', {
      chatId: 'c9',
      change: 'delivery',
      at: '2026-01-01T00:00:00Z',
    });
    await stable();
    http.expectNone('/api/chats');

    events.emit('chats.changed', {
      chatId: 'c1',
      change: 'deleted',
      at: '2026-01-01T00:00:01Z',
    });
    await stable();
    expect(navigate).toHaveBeenCalledWith(['/chat']);
    http
      .expectOne('/api/chats')
      .flush([chatSummary('c9', 'From WhatsApp'), CHATS[0]]);
  });

  it('shows that a reply is running in a chat', async () => {
    await load([chatSummary('c1', 'Busy', { running: true })]);
    expect(el('chat-running', item('c1'))?.textContent).toContain('Replying');
  });

  it('groups conversations, jobs, Pulse and contacts, each in the list order', async () => {
    await load([
      chatSummary('c1', 'Job: Morning', { kind: 'cron' }),
      chatSummary('c2', 'Pulse', { kind: 'pulse' }),
      chatSummary('c3', 'Mine'),
      chatSummary('c4', 'WhatsApp: Mom', { kind: 'whatsapp' }),
      chatSummary('c5', 'Mine too'),
    ]);
    const groups = Array.from(
      root().querySelectorAll<HTMLElement>('[data-testid="chat-group"]'),
    ).map((group) => ({
      heading: group.querySelector('h2')?.textContent?.trim(),
      titles: Array.from(
        group.querySelectorAll('[data-testid="chat-item-title"]'),
      ).map((title) => title.textContent?.trim()),
    }));
    expect(groups).toEqual([
      { heading: 'Conversations', titles: ['Mine', 'Mine too'] },
      { heading: 'Jobs', titles: ['Morning'] },
      { heading: 'Pulse', titles: ['Pulse'] },
      { heading: 'Contacts', titles: ['WhatsApp: Mom'] },
    ]);
  });

  it('needs no group heading when there are only conversations', async () => {
    await load();
    expect(root().querySelector('[data-testid="chat-group"] h2')).toBeNull();
  });

  it('explains a failed load and retries', async () => {
    fixture = TestBed.createComponent(ChatPage);
    await stable();
    http
      .expectOne('/api/chats')
      .flush(
        { statusCode: 500, message: 'Boom' },
        { status: 500, statusText: 'Error' },
      );
    await stable();
    expect(el('api-error')?.textContent).toContain("Couldn't load your chats");
    el('api-error-retry')?.click();
    await stable();
    http.expectOne('/api/chats').flush(CHATS);
    await stable();
    expect(el('api-error')).toBeNull();
    expect(titles()).toHaveLength(2);
  });
});

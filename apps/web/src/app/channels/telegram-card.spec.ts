import { settingsView } from '../testing/settings-data';
import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type {
  AppSettingsView,
  TelegramInboundMessage,
  TelegramPermission,
} from '@metatronos/shared-types';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import type { FakeEventStream } from '../testing/fake-event-stream';
import { TelegramCard } from './telegram-card';

const SETTINGS: AppSettingsView = settingsView({
  geminiApiKey: null,
  openaiApiKey: null,
  openaiCompatible: [],
  primaryModel: null,
  imageModel: null,
  braveApiKey: null,
  telegramBotToken: '••••mnop',
  telegramApiRoot: 'https://api.telegram.org',
  timezone: 'Europe/Paris',
  updatedAt: '2026-01-01T00:00:00.000Z',
});

const STRANGER: TelegramInboundMessage = {
  id: '9999:1',
  chatId: '9999',
  chatType: 'private',
  chatTitle: null,
  fromName: 'Eve',
  fromUsername: 'eve',
  text: 'hello bot',
  at: '2026-01-01T10:00:00.000Z',
  processing: 'skipped',
  reason: 'no read permission',
  permitted: false,
  reply: null,
};

const ANN: TelegramPermission = {
  id: 'p1',
  chatId: '4242',
  displayName: 'Ann',
  canRead: true,
  canReply: false,
  trusted: false,
  consoleChatId: null,
  autoReplyPausedUntil: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

describe('TelegramCard', () => {
  let fixture: ComponentFixture<TelegramCard>;
  let http: HttpTestingController;
  let events: FakeEventStream;
  const root = () => fixture.nativeElement as HTMLElement;
  const { el, text } = testIdQueries(root);
  const stable = () => fixture.whenStable();

  async function load(
    permissions: TelegramPermission[] = [],
    messages: TelegramInboundMessage[] = [STRANGER],
  ): Promise<void> {
    fixture = TestBed.createComponent(TelegramCard);
    await stable();
    http.expectOne('/api/settings').flush(SETTINGS);
    http
      .expectOne('/api/telegram/status')
      .flush({ status: 'connected', username: 'metatron_bot', reason: null });
    http.expectOne('/api/telegram/permissions').flush(permissions);
    http.expectOne((r) => r.url === '/api/telegram/messages').flush(messages);
    await stable();
  }

  beforeEach(() => {
    ({ http, events } = setUpApiTest(TelegramCard));
  });
  afterEach(() => tearDownApiTest(http));

  it('shows the live status, in plain words when Telegram refuses the token', async () => {
    await load();
    expect(text('telegram-state')).toBe('Connected as @metatron_bot');
    events.emit('telegram.status', {
      status: 'error',
      username: null,
      reason:
        'Telegram refused the bot token (401 Unauthorized): copy it again from BotFather.',
      at: '2026-01-01T10:00:00.000Z',
    });
    await stable();
    expect(text('telegram-state')).toBe('Not connected');
    expect(text('telegram-reason')).toContain('refused the bot token');
  });

  it('allows a stranger in one click (read and reply, not trusted)', async () => {
    await load();
    expect(text('telegram-message-state')).toBe('Not allowed: no reply');
    (el('telegram-allow') as HTMLButtonElement).click();
    const create = http.expectOne('/api/telegram/permissions');
    expect(create.request.method).toBe('POST');
    expect(create.request.body).toEqual({
      chatId: '9999',
      displayName: 'Eve',
      canRead: true,
      canReply: true,
    });
    create.flush({ ...ANN, id: 'p2', chatId: '9999', displayName: 'Eve' });
    http
      .expectOne('/api/telegram/permissions')
      .flush([{ ...ANN, id: 'p2', chatId: '9999', displayName: 'Eve' }]);
    http
      .expectOne((r) => r.url === '/api/telegram/messages')
      .flush([{ ...STRANGER, permitted: true }]);
    await stable();
    expect(el('telegram-allow')).toBeNull();
    expect(text('telegram-permissions')).toContain('Eve');
  });

  it('ends "Answering…" and shows the answer when the auto-reply is done, without a reload', async () => {
    const asked = {
      ...STRANGER,
      id: '4242:7',
      chatId: '4242',
      fromName: 'Ann',
      text: 'what time is it?',
      permitted: true,
      processing: 'working',
      reason: null,
    };
    await load([ANN], [asked]);
    expect(text('telegram-message-state')).toBe('Answering…');
    events.emit('channels.inbound', {
      channel: 'telegram',
      id: '4242:7',
      processing: 'done',
      at: '2026-01-01T10:00:05.000Z',
    });
    http.expectOne('/api/telegram/permissions').flush([ANN]);
    http
      .expectOne((r) => r.url === '/api/telegram/messages')
      .flush([{ ...asked, processing: 'done', reply: 'It is ten.' }]);
    await stable();
    expect(text('telegram-message-state')).toBe('Answered');
    expect(text('telegram-message-reply')).toContain('It is ten.');
  });

  it('saves a new token and asks for it again when the server changes', async () => {
    await load([ANN], []);
    const rootInput = el<HTMLInputElement>(
      'telegram-root-input',
    ) as HTMLInputElement;
    rootInput.value = 'http://127.0.0.1:8081/';
    rootInput.dispatchEvent(new Event('input'));
    await stable();
    expect(root().textContent).toContain('A new server needs the token again');
    const token = el<HTMLInputElement>(
      'telegram-token-input',
    ) as HTMLInputElement;
    token.value = '123:ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    token.dispatchEvent(new Event('input'));
    await stable();
    (el('telegram-save') as HTMLButtonElement).click();
    const save = http.expectOne('/api/settings');
    expect(save.request.method).toBe('PATCH');
    expect(save.request.body).toEqual({
      telegramBotToken: '123:ABCDEFGHIJKLMNOPQRSTUVWXYZ',
      telegramApiRoot: 'http://127.0.0.1:8081',
    });
    save.flush({
      ...SETTINGS,
      telegramApiRoot: 'http://127.0.0.1:8081',
      telegramBotToken: '••••WXYZ',
    });
    http
      .expectOne('/api/telegram/status')
      .flush({ status: 'connecting', username: null, reason: null });
    await stable();
    expect(text('telegram-state')).toBe('Connecting…');
  });

  it('keeps a status event that arrives before the answer to the status asked after saving', async () => {
    await load([], []);
    const token = el<HTMLInputElement>(
      'telegram-token-input',
    ) as HTMLInputElement;
    token.value = '123:ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    token.dispatchEvent(new Event('input'));
    await stable();
    (el('telegram-save') as HTMLButtonElement).click();
    http.expectOne('/api/settings').flush({
      ...SETTINGS,
      telegramBotToken: '••••WXYZ',
    });
    await stable();
    events.emit('telegram.status', {
      status: 'connected',
      username: 'metatron_bot',
      reason: null,
      at: '2026-01-01T10:00:00.000Z',
    });
    http
      .expectOne('/api/telegram/status')
      .flush({ status: 'connecting', username: null, reason: null });
    await stable();
    expect(text('telegram-state')).toBe('Connected as @metatron_bot');
  });
});

import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type {
  WhatsAppInboundMessage,
  WhatsAppStatusView,
} from '@metatronos/shared-types';
import { EVENT_SOURCE_FACTORY } from '../core/event-stream';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import {
  type FakeEventSource,
  fakeEventSources,
} from '../testing/fake-event-source';
import type { FakeEventStream } from '../testing/fake-event-stream';
import { WhatsAppCard } from './whatsapp-card';

const STATUS_URL = '/api/whatsapp/status';
const INBOUND_URL = '/api/whatsapp/inbound?limit=30';
const STRANGER: WhatsAppInboundMessage = {
  id: 'W1',
  phone: '15550001111',
  fromName: 'Eve',
  text: 'who is this?',
  at: '2026-11-21T22:00:00.000Z',
  processing: 'skipped',
  reason: 'no read permission',
  permitted: false,
  reply: null,
};
const DISCONNECTED: WhatsAppStatusView = {
  status: 'disconnected',
  phoneNumber: null,
};
const CONNECTED: WhatsAppStatusView = {
  status: 'connected',
  phoneNumber: '14155551234',
};
const QR = 'data:image/png;base64,iVBORw0KGgo=';

describe('WhatsAppCard', () => {
  let fixture: ComponentFixture<WhatsAppCard>;
  let http: HttpTestingController;
  let sources: FakeEventSource[];
  let events: FakeEventStream;

  const root = () => fixture.nativeElement as HTMLElement;
  const { el, text } = testIdQueries(root);
  const button = (testId: string) =>
    el<HTMLButtonElement>(testId) as HTMLButtonElement;
  const stable = () => fixture.whenStable();

  async function load(
    view: WhatsAppStatusView = DISCONNECTED,
    inbound: WhatsAppInboundMessage[] = [],
  ): Promise<void> {
    fixture = TestBed.createComponent(WhatsAppCard);
    await stable();
    http.expectOne(STATUS_URL).flush(view);
    http.expectOne(INBOUND_URL).flush(inbound);
    await stable();
  }

  async function startLinking(): Promise<FakeEventSource> {
    button('whatsapp-link').click();
    await stable();
    const req = http.expectOne('/api/whatsapp/connect');
    expect(req.request.method).toBe('POST');
    req.flush({ status: 'connecting' });
    await stable();
    expect(sources).toHaveLength(1);
    const source = sources[0];
    expect(source.url).toBe('/api/whatsapp/qr/stream');
    source.open();
    return source;
  }

  async function disconnect(clearSession: boolean): Promise<void> {
    button('whatsapp-disconnect').click();
    await stable();
    expect(el('whatsapp-disconnect-confirm')?.getAttribute('role')).toBe(
      'alertdialog',
    );
    expect(text('whatsapp-clear-session')).toBe(
      'Also clear the saved session (you will need to scan again)',
    );
    if (clearSession) {
      el('whatsapp-clear-session')?.querySelector('input')?.click();
      await stable();
    }
    button('whatsapp-disconnect-confirm-button').click();
    await stable();
    const req = http.expectOne('/api/whatsapp/disconnect');
    expect(req.request.method).toBe('POST');
    expect(req.request.body).toEqual({ clearSession });
    req.flush({ status: 'disconnected' });
    await stable();
  }

  beforeEach(() => {
    const fake = fakeEventSources();
    sources = fake.sources;
    TestBed.configureTestingModule({
      providers: [{ provide: EVENT_SOURCE_FACTORY, useValue: fake.factory }],
    });
    ({ http, events } = setUpApiTest(WhatsAppCard));
  });

  afterEach(() => {
    fixture?.destroy();
    jest.useRealTimers();
    tearDownApiTest(http);
  });

  it('lists what people sent, a stranger with Allow (Read and Reply on), and follows the auto-reply live', async () => {
    await load(CONNECTED, [STRANGER]);
    const items = () =>
      Array.from(
        root().querySelectorAll<HTMLElement>(
          '[data-testid="whatsapp-messages"] li',
        ),
      );
    expect(items()).toHaveLength(1);
    expect(items()[0].textContent).toContain('Eve');
    expect(items()[0].textContent).toContain('who is this?');
    expect(text('whatsapp-message-state')).toBe('Not allowed: no reply');

    button('whatsapp-allow').click();
    await stable();
    const req = http.expectOne('/api/whatsapp/permissions');
    expect(req.request.method).toBe('POST');
    expect(req.request.body).toEqual({
      phoneNumber: '15550001111',
      displayName: 'Eve',
      canRead: true,
      canReply: true,
    });
    req.flush({ id: 'p1', phoneNumber: '15550001111', displayName: 'Eve' });
    http.expectOne(INBOUND_URL).flush([{ ...STRANGER, permitted: true }]);
    await stable();
    expect(el('whatsapp-allow')).toBeNull();

    // Eve writes again: "Answering…", then the answer shows on the server's event, without a reload.
    const next = {
      ...STRANGER,
      id: 'W2',
      text: 'hello?',
      permitted: true,
      processing: 'working',
      reason: null,
    };
    events.emit('channels.inbound', {
      channel: 'whatsapp',
      id: 'W2',
      processing: 'working',
      at: '2026-11-21T22:01:00.000Z',
    });
    http.expectOne(INBOUND_URL).flush([next]);
    await stable();
    expect(text('whatsapp-message-state')).toBe('Answering…');
    events.emit('channels.inbound', {
      channel: 'telegram',
      id: 'T1',
      processing: 'done',
      at: '2026-11-21T22:01:00.000Z',
    });
    http.expectNone(INBOUND_URL);
    events.emit('channels.inbound', {
      channel: 'whatsapp',
      id: 'W2',
      processing: 'done',
      at: '2026-11-21T22:01:05.000Z',
    });
    http
      .expectOne(INBOUND_URL)
      .flush([{ ...next, processing: 'done', reply: 'Hi Eve!' }]);
    await stable();
    expect(text('whatsapp-message-state')).toBe('Answered');
    expect(text('whatsapp-message-reply')).toContain('Hi Eve!');
  });

  it('shows a disconnected link with Link device', async () => {
    await load();
    expect(text('whatsapp-state')).toBe('Disconnected');
    expect(el('whatsapp-state')?.dataset['status']).toBe('disconnected');
    expect(button('whatsapp-link').disabled).toBe(false);
    expect(el('whatsapp-disconnect')).toBeNull();
    expect(el('whatsapp-details')).toBeNull();
  });

  it('says why the link stopped and when it retries', async () => {
    await load({
      status: 'disconnected',
      phoneNumber: null,
      reason: 'logged out',
      reconnectAt: '2026-11-21T22:10:00.000Z',
    });
    expect(text('whatsapp-reason')).toBe('logged out');
    expect(text('whatsapp-reconnect')).toContain('Next reconnect attempt at');
    expect(
      el('whatsapp-reconnect')?.querySelector('time')?.getAttribute('datetime'),
    ).toBe('2026-11-21T22:10:00.000Z');
  });

  it('shows the connected number, and Disconnect instead of Link device', async () => {
    await load(CONNECTED);
    expect(text('whatsapp-state')).toBe('Connected as +14155551234');
    expect(el('whatsapp-link')).toBeNull();
    expect(button('whatsapp-disconnect').disabled).toBe(false);
  });

  it('links a device: POST connect, the QR from the stream, then "Connected as …" and the stream closed', async () => {
    await load();
    const source = await startLinking();
    expect(text('whatsapp-state')).toBe('Connecting…');
    expect(el('whatsapp-qr-waiting')).not.toBeNull();

    source.emit('status', { status: 'connecting', phoneNumber: null });
    source.emit('qr', { qr: QR });
    await stable();
    const img = el<HTMLImageElement>('whatsapp-qr') as HTMLImageElement;
    expect(img.getAttribute('src')).toBe(QR);
    expect(img.width).toBe(256);
    expect(img.height).toBe(256);
    expect(img.alt).toContain('QR code');
    expect(text('whatsapp-state')).toBe('Scan the QR code');
    expect(text('whatsapp-linking')).toContain('Linked devices');
    expect(text('whatsapp-linking')).toContain('Link a device');

    const next = 'data:image/png;base64,bmV4dA==';
    source.emit('qr', { qr: next });
    await stable();
    expect(el('whatsapp-qr')?.getAttribute('src')).toBe(next);

    source.emit('connected', { phoneNumber: '14155551234' });
    await stable();
    expect(source.closed).toBe(true);
    expect(el('whatsapp-qr')).toBeNull();
    expect(el('whatsapp-linking')).toBeNull();
    expect(text('whatsapp-state')).toBe('Connected as +14155551234');
  });

  it('waits for the number when the status says connected without one', async () => {
    await load();
    const source = await startLinking();
    source.emit('status', { status: 'connected', phoneNumber: null });
    await stable();
    expect(text('whatsapp-state')).toBe('Connected');
    expect(source.closed).toBe(false);
    source.emit('status', { status: 'connected', phoneNumber: '14155551234' });
    await stable();
    expect(source.closed).toBe(true);
    expect(text('whatsapp-state')).toBe('Connected as +14155551234');
  });

  it('needs no QR when the account is linked already', async () => {
    await load();
    button('whatsapp-link').click();
    await stable();
    http
      .expectOne('/api/whatsapp/connect')
      .flush({ status: 'already_connected', phoneNumber: '447700900123' });
    await stable();
    expect(sources).toHaveLength(0);
    expect(text('whatsapp-state')).toBe('Connected as +447700900123');
  });

  it('ignores the status from before linking, but stops when linking ends', async () => {
    await load();
    const source = await startLinking();
    source.emit('status', { status: 'disconnected', phoneNumber: null });
    await stable();
    expect(source.closed).toBe(false);

    source.emit('status', { status: 'qr_ready', phoneNumber: null });
    source.emit('qr', { qr: QR });
    await stable();
    source.emit('status', { status: 'disconnected', phoneNumber: null });
    await stable();
    expect(source.closed).toBe(true);
    expect(el('whatsapp-qr')).toBeNull();
    http.expectOne(STATUS_URL).flush({
      status: 'disconnected',
      phoneNumber: null,
      reason: 'QR code expired',
    });
    await stable();
    expect(text('whatsapp-reason')).toBe('QR code expired');
    expect(button('whatsapp-link').disabled).toBe(false);
  });

  it('closes the stream when the server refuses it, and asks for the status', async () => {
    await load();
    const source = await startLinking();
    source.fail(2);
    await stable();
    expect(source.closed).toBe(true);
    http.expectOne(STATUS_URL).flush(DISCONNECTED);
  });

  it('closes the stream when the card goes away', async () => {
    await load();
    const source = await startLinking();
    fixture.destroy();
    expect(source.closed).toBe(true);
  });

  it('opens the stream by itself when a QR is waiting (linking started elsewhere)', async () => {
    await load({ status: 'qr_ready', phoneNumber: null });
    expect(sources).toHaveLength(1);
    sources[0].emit('qr', { qr: QR });
    await stable();
    expect(el('whatsapp-qr')?.getAttribute('src')).toBe(QR);
  });

  it('shows a failed connect', async () => {
    await load();
    button('whatsapp-link').click();
    await stable();
    http.expectOne('/api/whatsapp/connect').flush(
      {
        statusCode: 500,
        message: 'Baileys crashed',
        error: 'Internal Server Error',
      },
      { status: 500, statusText: 'Error' },
    );
    await stable();
    expect(text('whatsapp-error')).toBe('Baileys crashed');
    expect(sources).toHaveLength(0);
  });

  it('disconnects after the confirmation, keeping the saved session by default', async () => {
    await load(CONNECTED);
    await disconnect(false);
    expect(text('whatsapp-state')).toBe('Disconnected');
    expect(el('whatsapp-disconnect-confirm')).toBeNull();
    expect(
      document.querySelector('mat-snack-bar-container')?.textContent,
    ).toContain('WhatsApp disconnected.');
  });

  it('disconnects and clears the saved session when the box is ticked', async () => {
    await load(CONNECTED);
    await disconnect(true);
    expect(text('whatsapp-state')).toBe('Disconnected');
    expect(
      document.querySelector('mat-snack-bar-container')?.textContent,
    ).toContain('saved session cleared');
  });

  it('cancels a disconnect without a request', async () => {
    await load(CONNECTED);
    button('whatsapp-disconnect').click();
    await stable();
    button('whatsapp-disconnect-cancel').click();
    await stable();
    expect(el('whatsapp-disconnect-confirm')).toBeNull();
    expect(text('whatsapp-state')).toBe('Connected as +14155551234');

    // Escape cancels too, and the focus goes back to Disconnect.
    button('whatsapp-disconnect').click();
    await stable();
    document.activeElement?.dispatchEvent(
      new KeyboardEvent('keydown', {
        key: 'Escape',
        bubbles: true,
        cancelable: true,
      }),
    );
    await stable();
    expect(el('whatsapp-disconnect-confirm')).toBeNull();
    expect(document.activeElement).toBe(el('whatsapp-disconnect'));
  });

  it('polls the status every 10 s, but not while the stream is open', () => {
    jest.useFakeTimers();
    fixture = TestBed.createComponent(WhatsAppCard);
    fixture.detectChanges();
    http.expectOne(STATUS_URL).flush(DISCONNECTED);
    http.expectOne(INBOUND_URL).flush([]);
    fixture.detectChanges();

    jest.advanceTimersByTime(9_999);
    http.expectNone(STATUS_URL);
    jest.advanceTimersByTime(1);
    http.expectOne(STATUS_URL).flush(CONNECTED);
    fixture.detectChanges();
    expect(text('whatsapp-state')).toBe('Connected as +14155551234');

    jest.advanceTimersByTime(10_000);
    http.expectOne(STATUS_URL).flush({ status: 'qr_ready', phoneNumber: null });
    fixture.detectChanges();
    expect(sources).toHaveLength(1);
    jest.advanceTimersByTime(30_000);
    http.expectNone(STATUS_URL);
  });

  it.each([
    [
      'logged_out',
      'disconnected',
      'Logged out on the phone — link again',
      /removed under Linked devices/,
    ],
    [
      'forbidden',
      'disconnected',
      'WhatsApp refused this account',
      /Check WhatsApp on the phone/,
    ],
    [
      'connection_lost',
      'connecting',
      'Reconnecting to WhatsApp…',
      /connection to WhatsApp was lost/,
    ],
    [
      'connection_replaced',
      'connecting',
      'Reconnecting to WhatsApp…',
      /opened somewhere else/,
    ],
    [
      'unreachable',
      'connecting',
      'Reconnecting to WhatsApp…',
      /can't reach WhatsApp/,
    ],
  ] as const)(
    'puts %s (%s) in plain words, live from the whatsapp.status event',
    async (problem, status, label, detail) => {
      await load(CONNECTED);
      expect(text('whatsapp-state')).toBe('Connected as +14155551234');
      events.emit('whatsapp.status', {
        status,
        phoneNumber: null,
        reason: 'Connection closed (408); reconnecting',
        problem,
        at: '2026-11-21T22:00:00.000Z',
      });
      await stable();
      http.expectOne(STATUS_URL).flush({
        status,
        phoneNumber: null,
        reason: 'Connection closed (408); reconnecting',
        problem,
        reconnectAt:
          status === 'connecting' ? '2026-11-21T22:00:04.000Z' : null,
      });
      await stable();
      expect(text('whatsapp-state')).toBe(label);
      expect(el('whatsapp-state')?.dataset['problem']).toBe(problem);
      expect(text('whatsapp-reason')).toMatch(detail);
      // No jargon: neither the code nor the raw reason.
      expect(root().textContent).not.toContain('(408)');
      expect(root().textContent).not.toContain(problem);
      expect(el('whatsapp-reconnect') !== null).toBe(status === 'connecting');
    },
  );

  it('says it is reconnecting, not waiting for a QR code, when the link drops while linking', async () => {
    await load();
    const source = await startLinking();
    source.emit('status', { status: 'connecting', phoneNumber: null });
    await stable();
    expect(el('whatsapp-qr-waiting')).not.toBeNull();
    source.emit('status', {
      status: 'connecting',
      phoneNumber: null,
      reason: 'Could not open the WhatsApp connection; reconnecting',
      problem: 'unreachable',
      reconnectAt: '2026-11-21T22:00:04.000Z',
    });
    await stable();
    expect(el('whatsapp-qr-waiting')).toBeNull();
    expect(text('whatsapp-qr-reconnecting')).toContain(
      'Reconnecting to WhatsApp…',
    );
    expect(text('whatsapp-state')).toBe('Reconnecting to WhatsApp…');
    expect(text('whatsapp-reason')).toBe(
      "The server can't reach WhatsApp: check its internet connection.",
    );
    // WhatsApp answers: the QR code replaces the notice.
    source.emit('status', { status: 'qr_ready', phoneNumber: null });
    source.emit('qr', { qr: QR });
    await stable();
    expect(el('whatsapp-qr-reconnecting')).toBeNull();
    expect(el('whatsapp-qr')).not.toBeNull();
    expect(text('whatsapp-state')).toBe('Scan the QR code');
    expect(el('whatsapp-reason')).toBeNull();
  });

  it('follows the whatsapp.status and whatsapp.qr events', async () => {
    await load(CONNECTED);
    events.emit('whatsapp.status', {
      status: 'disconnected',
      phoneNumber: null,
      reason: 'logged out',
      at: '2026-11-21T22:00:00.000Z',
    });
    await stable();
    http.expectOne(STATUS_URL).flush({ ...DISCONNECTED, reason: 'logged out' });
    await stable();
    expect(text('whatsapp-state')).toBe('Disconnected');
    expect(text('whatsapp-reason')).toBe('logged out');

    events.emit('whatsapp.qr', { qr: QR, at: '2026-11-21T22:00:01.000Z' });
    await stable();
    http.expectOne(STATUS_URL).flush({ status: 'qr_ready', phoneNumber: null });
    await stable();
    expect(sources).toHaveLength(1);
    events.emit('whatsapp.qr', { qr: QR, at: '2026-11-21T22:00:02.000Z' });
    await stable();
    http.expectNone(STATUS_URL);
  });

  it('opens the permissions dialog', async () => {
    await load(CONNECTED);
    button('whatsapp-permissions').click();
    await stable();
    const dialog = document.querySelector('mat-dialog-container');
    expect(dialog?.querySelector('h2')?.textContent?.trim()).toBe(
      'WhatsApp permissions',
    );
    http.expectOne('/api/whatsapp/permissions').flush([]);
    await stable();
    expect(
      document.querySelector('[data-testid="no-permissions"]'),
    ).not.toBeNull();
  });
});

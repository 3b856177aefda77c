import { TestBed } from '@angular/core/testing';
import { fakeEventSources } from '../testing/fake-event-source';
import { EVENT_SOURCE_FACTORY } from './event-stream';
import { WhatsAppQrStream } from './whatsapp-qr-stream';

describe('WhatsAppQrStream', () => {
  function setUp() {
    const fake = fakeEventSources();
    TestBed.configureTestingModule({
      providers: [{ provide: EVENT_SOURCE_FACTORY, useValue: fake.factory }],
    });
    const handlers = {
      onQr: jest.fn(),
      onStatus: jest.fn(),
      onConnected: jest.fn(),
      onError: jest.fn(),
    };
    const handle = TestBed.inject(WhatsAppQrStream).open(handlers);
    return { sources: fake.sources, handlers, handle };
  }

  it('opens the QR stream and passes on its events', () => {
    const { sources, handlers } = setUp();
    expect(sources.map((source) => source.url)).toEqual([
      '/api/whatsapp/qr/stream',
    ]);
    const [source] = sources;
    source.emit('status', { status: 'qr_ready', phoneNumber: null });
    source.emit('qr', { qr: 'data:image/png;base64,AA==' });
    source.emit('connected', { phoneNumber: '14155551234' });
    expect(handlers.onStatus).toHaveBeenCalledWith('qr_ready', null, {
      reason: null,
      problem: null,
      reconnectAt: null,
    });
    source.emit('status', {
      status: 'connecting',
      phoneNumber: null,
      reason: 'Connection closed (408); reconnecting',
      problem: 'connection_lost',
      reconnectAt: '2026-11-21T22:00:04.000Z',
    });
    expect(handlers.onStatus).toHaveBeenLastCalledWith('connecting', null, {
      reason: 'Connection closed (408); reconnecting',
      problem: 'connection_lost',
      reconnectAt: '2026-11-21T22:00:04.000Z',
    });
    // A code this console does not know is dropped (the reason text still says it).
    source.emit('status', {
      status: 'connecting',
      phoneNumber: null,
      reason: 'Something new',
      problem: 'brand_new',
    });
    expect(handlers.onStatus).toHaveBeenLastCalledWith('connecting', null, {
      reason: 'Something new',
      problem: null,
      reconnectAt: null,
    });
    expect(handlers.onQr).toHaveBeenCalledWith('data:image/png;base64,AA==');
    expect(handlers.onConnected).toHaveBeenCalledWith('14155551234');
  });

  it('skips malformed events', () => {
    const { sources, handlers } = setUp();
    sources[0].emit('status', { status: 'sleeping' });
    sources[0].emit('qr', { qr: 42 });
    expect(handlers.onStatus).not.toHaveBeenCalled();
    expect(handlers.onQr).not.toHaveBeenCalled();
  });

  it('leaves reconnecting to the browser, and reports when it gives up', () => {
    const { sources, handlers } = setUp();
    sources[0].fail(0);
    expect(handlers.onError).not.toHaveBeenCalled();
    expect(sources[0].closed).toBe(false);
    sources[0].fail(2);
    expect(handlers.onError).toHaveBeenCalledTimes(1);
    expect(sources[0].closed).toBe(true);
  });

  it('is silent once closed', () => {
    const { sources, handlers, handle } = setUp();
    handle.close();
    handle.close();
    expect(sources[0].closed).toBe(true);
    sources[0].emit('qr', { qr: 'data:image/png;base64,AA==' });
    expect(handlers.onQr).not.toHaveBeenCalled();
  });
});

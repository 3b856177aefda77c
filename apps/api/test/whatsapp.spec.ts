import { EventEmitter2 } from '@nestjs/event-emitter';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppEventMap, BufferedMessage } from '@metatronos/shared-types';
import { WhatsAppStreamSettings } from '../src/whatsapp/gateway/whatsapp.controller';
import { WhatsAppGateway } from '../src/whatsapp/gateway/whatsapp-gateway';
import { ReplaceableSocketFactory } from '../src/whatsapp/gateway/replaceable-socket.factory';
import { WhatsAppSocketFactory } from '../src/whatsapp/gateway/whatsapp-socket';
import {
  FORBIDDEN_REASON,
  LOGGED_OUT_REASON,
  NOT_CONNECTED_MESSAGE,
  RECONNECT_MAX_MS,
  WhatsAppService,
} from '../src/whatsapp/gateway/whatsapp.service';
import {
  FakeWhatsAppSocketFactory,
  incoming,
  type FakeWhatsAppSocket,
} from './support/fake-whatsapp-socket';
import { openSse } from './support/sse';
import { createTestApp, type TestApp } from './support/test-app';

/** The extra fields of a `status` event on the QR stream while the link is fine. */
const LINK_FINE = { reason: null, problem: null, reconnectAt: null };

const ROUTES: Array<['get' | 'post', string]> = [
  ['get', '/api/whatsapp/status'],
  ['post', '/api/whatsapp/connect'],
  ['get', '/api/whatsapp/qr'],
  ['get', '/api/whatsapp/qr/stream'],
  ['post', '/api/whatsapp/disconnect'],
  ['get', '/api/whatsapp/messages'],
];

async function waitFor(
  check: () => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function useFake(t: TestApp): FakeWhatsAppSocketFactory {
  const fake = new FakeWhatsAppSocketFactory();
  (t.app.get(WhatsAppSocketFactory) as ReplaceableSocketFactory).replaceWith(
    fake,
  );
  return fake;
}

/** PNG width × height from the IHDR chunk of a data URL. */
function pngSize(dataUrl: string): { width: number; height: number } {
  const png = Buffer.from(
    dataUrl.replace(/^data:image\/png;base64,/, ''),
    'base64',
  );
  expect(png.subarray(1, 4).toString()).toBe('PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

describe('WhatsApp', () => {
  let t: TestApp;
  let service: WhatsAppService;
  let fake: FakeWhatsAppSocketFactory;
  const events: Array<{ name: keyof AppEventMap; payload: unknown }> = [];

  beforeAll(async () => {
    t = await createTestApp();
    service = t.app.get(WhatsAppService);
    fake = useFake(t);
    const emitter = t.app.get(EventEmitter2);
    for (const name of [
      'whatsapp.status',
      'whatsapp.qr',
      'whatsapp.message',
    ] as const) {
      emitter.on(name, (payload: unknown) => events.push({ name, payload }));
    }
  });
  afterAll(() => t.close());

  /** Connects through the API and opens the link as `phone`. */
  async function connectAs(phone = '19876543210'): Promise<FakeWhatsAppSocket> {
    const before = fake.sockets.length;
    const agent = await t.owner();
    await agent.post('/api/whatsapp/connect').expect(200);
    await waitFor(() => fake.sockets.length > before, 'a socket');
    fake.latest.open(phone);
    expect(service.status).toBe('connected');
    return fake.latest;
  }

  async function reset(): Promise<void> {
    await service.disconnect(false);
    service.random = Math.random;
    events.length = 0;
  }

  describe('access', () => {
    it.each(ROUTES)(
      '%s %s answers 401 without a session',
      async (method, path) => {
        const res = await t.http()[method](path);
        expect(res.status).toBe(401);
        expect(res.body.message).toBe('Log in to MetatronOS first');
      },
    );

    it('provides the service as the WhatsAppGateway', () => {
      expect(t.app.get(WhatsAppGateway)).toBe(service);
    });
  });

  describe('linking', () => {
    afterEach(reset);

    it('starts disconnected with no QR code (404 with the seed text)', async () => {
      const agent = await t.owner();
      expect(
        (await agent.get('/api/whatsapp/status').expect(200)).body,
      ).toEqual({
        status: 'disconnected',
        phoneNumber: null,
        reason: null,
        problem: null,
        reconnectAt: null,
      });
      const qr = await agent.get('/api/whatsapp/qr').expect(404);
      expect(qr.body).toEqual({
        statusCode: 404,
        message: 'No QR code available',
        error: 'Not Found',
      });
    });

    it('streams status, QR codes and the connection on /qr/stream, and serves the QR on /qr', async () => {
      const { url, cookie } = await t.serve();
      const stream = await openSse(`${url}/api/whatsapp/qr/stream`, {
        Cookie: cookie,
      });
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toMatch(/text\/event-stream/);
      expect(stream.headers.get('cache-control')).toBe('no-cache');
      expect(await stream.next()).toEqual({
        event: 'status',
        data: { status: 'disconnected', phoneNumber: null, ...LINK_FINE },
      });

      const agent = await t.owner();
      expect(
        (await agent.post('/api/whatsapp/connect').expect(200)).body,
      ).toEqual({ status: 'connecting' });
      expect(await stream.next()).toEqual({
        event: 'status',
        data: { status: 'connecting', phoneNumber: null, ...LINK_FINE },
      });
      await waitFor(() => fake.sockets.length > 0, 'a socket');
      const socket = fake.latest;
      expect(socket.options.authDir).toBe(
        join(t.config.dataDir, 'whatsapp-auth'),
      );
      // A second connect while connecting opens no second socket.
      expect(
        (await agent.post('/api/whatsapp/connect').expect(200)).body,
      ).toEqual({ status: 'connecting' });

      socket.qr('2@first,code');
      const qr = await stream.next((e) => e.event === 'qr');
      const dataUrl = (qr.data as { qr: string }).qr;
      expect(dataUrl).toMatch(/^data:image\/png;base64,/);
      expect(pngSize(dataUrl)).toEqual({ width: 256, height: 256 });
      expect(await stream.next((e) => e.event === 'status')).toEqual({
        event: 'status',
        data: { status: 'qr_ready', phoneNumber: null, ...LINK_FINE },
      });
      expect((await agent.get('/api/whatsapp/qr').expect(200)).body).toEqual({
        qr: dataUrl,
      });
      expect(events.find((e) => e.name === 'whatsapp.qr')?.payload).toEqual({
        qr: dataUrl,
        at: expect.any(String),
      });

      // A late subscriber gets the current QR at once.
      const late = await openSse(`${url}/api/whatsapp/qr/stream`, {
        Cookie: cookie,
      });
      expect(await late.next()).toEqual({
        event: 'status',
        data: { status: 'qr_ready', phoneNumber: null, ...LINK_FINE },
      });
      expect(await late.next()).toEqual({ event: 'qr', data: { qr: dataUrl } });
      late.close();

      socket.qr('2@second,code');
      const second = await stream.next((e) => e.event === 'qr');
      expect((second.data as { qr: string }).qr).not.toBe(dataUrl);

      socket.open('19876543210');
      expect(await stream.next((e) => e.event === 'status')).toEqual({
        event: 'status',
        data: { status: 'connected', phoneNumber: '19876543210', ...LINK_FINE },
      });
      expect(await stream.next((e) => e.event === 'connected')).toEqual({
        event: 'connected',
        data: { phoneNumber: '19876543210' },
      });
      stream.close();

      await agent.get('/api/whatsapp/qr').expect(404);
      expect(
        (await agent.get('/api/whatsapp/status').expect(200)).body,
      ).toEqual({
        status: 'connected',
        phoneNumber: '19876543210',
        reason: null,
        problem: null,
        reconnectAt: null,
      });
      expect(
        (await agent.post('/api/whatsapp/connect').expect(200)).body,
      ).toEqual({ status: 'already_connected', phoneNumber: '19876543210' });
      expect(fake.sockets).toHaveLength(1);
      expect(
        events
          .filter((e) => e.name === 'whatsapp.status')
          .map((e) => e.payload),
      ).toEqual([
        {
          status: 'connecting',
          phoneNumber: null,
          reason: null,
          problem: null,
          at: expect.any(String),
        },
        {
          status: 'qr_ready',
          phoneNumber: null,
          reason: null,
          problem: null,
          at: expect.any(String),
        },
        {
          status: 'connected',
          phoneNumber: '19876543210',
          reason: null,
          problem: null,
          at: expect.any(String),
        },
      ]);
    });

    it('sends a keep-alive comment on the QR stream', async () => {
      t.app.get(WhatsAppStreamSettings).keepAliveMs = 40;
      try {
        const { url, cookie } = await t.serve();
        const controller = new AbortController();
        const res = await fetch(`${url}/api/whatsapp/qr/stream`, {
          headers: { Cookie: cookie },
          signal: controller.signal,
        });
        let text = '';
        const decoder = new TextDecoder();
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          text += decoder.decode(chunk, { stream: true });
          if (text.includes(': keep-alive\n\n')) break;
        }
        controller.abort();
        expect(text).toContain('event: status\n');
        expect(text).toContain(': keep-alive\n\n');
      } finally {
        t.app.get(WhatsAppStreamSettings).keepAliveMs = 30_000;
      }
    });
  });

  describe('reconnecting', () => {
    afterEach(reset);

    const delay = () =>
      (service.reconnectAt as Date).getTime() - t.clock.now().getTime();

    it('reconnects at once on restart-required (515) without counting it', async () => {
      const first = await connectAs();
      first.close(515);
      expect(service.status).toBe('connecting');
      expect(service.reconnectAt).toBeNull();
      await waitFor(
        () => fake.sockets.length > fake.sockets.indexOf(first) + 1,
        'an immediate new socket',
      );
      expect(first.ended).toBe(true);
      fake.latest.close(515);
      await waitFor(
        () => fake.sockets.length > fake.sockets.indexOf(first) + 2,
        'another immediate socket',
      );
      // Still the first backoff step: 515s were not counted.
      fake.latest.close(408);
      expect(delay()).toBeGreaterThanOrEqual(1600);
      expect(delay()).toBeLessThanOrEqual(2400);
    });

    it('backs off 2 s, 4 s, 8 s… with jitter on lost connections, capped at 5 min, and reconnects when due', async () => {
      await connectAs();
      const expected = [
        2000,
        4000,
        8000,
        16000,
        32000,
        64000,
        128000,
        256000,
        RECONNECT_MAX_MS,
        RECONNECT_MAX_MS,
      ];
      for (const [step, nominal] of expected.entries()) {
        const count = fake.sockets.length;
        fake.latest.close(step % 2 === 0 ? 408 : 428);
        expect(service.status).toBe('connecting');
        expect(service.reason).toMatch(
          /^Connection closed \((408|428)\); reconnecting$/,
        );
        expect(delay()).toBeGreaterThanOrEqual(Math.round(nominal * 0.8));
        expect(delay()).toBeLessThanOrEqual(
          Math.min(RECONNECT_MAX_MS, Math.round(nominal * 1.2)),
        );
        const view = (
          await (await t.owner()).get('/api/whatsapp/status').expect(200)
        ).body;
        expect(view).toMatchObject({
          status: 'connecting',
          phoneNumber: '19876543210',
          reconnectAt: (service.reconnectAt as Date).toISOString(),
        });

        // Not yet due: nothing happens.
        t.clock.advance(delay() - 1);
        expect(service.reconnectIfDue()).toBe(false);
        expect(fake.sockets).toHaveLength(count);
        t.clock.advance(1);
        expect(service.reconnectIfDue()).toBe(true);
        await waitFor(
          () => fake.sockets.length === count + 1,
          'the reconnect socket',
        );
      }
      // The jitter goes both ways, and the cap holds with the largest factor.
      service.random = () => 1;
      fake.latest.close(408);
      expect(delay()).toBe(RECONNECT_MAX_MS);
      service.random = () => 0;
      service.reconnectIfDue();
      t.clock.advance(delay());
      service.reconnectIfDue();
      await waitFor(() => service.reconnectAt === null, 'reconnect');
      fake.latest.close(408);
      expect(delay()).toBe(Math.round(RECONNECT_MAX_MS * 0.8));
    });

    it.each([
      [408, 'connection_lost'],
      [428, 'connection_closed'],
      [440, 'connection_replaced'],
      [500, 'bad_session'],
      [411, 'multidevice_mismatch'],
      [503, 'service_unavailable'],
      [499, 'closed'],
    ])(
      'says why it reconnects after %i (%s): in the status, the event and the QR stream',
      async (code, problem) => {
        await connectAs();
        const { url, cookie } = await t.serve();
        const stream = await openSse(`${url}/api/whatsapp/qr/stream`, {
          Cookie: cookie,
        });
        expect(await stream.next()).toEqual({
          event: 'status',
          data: {
            status: 'connected',
            phoneNumber: '19876543210',
            ...LINK_FINE,
          },
        });
        fake.latest.close(code);
        const reason = `Connection closed (${code}); reconnecting`;
        expect(
          (await (await t.owner()).get('/api/whatsapp/status').expect(200))
            .body,
        ).toEqual({
          status: 'connecting',
          phoneNumber: '19876543210',
          reason,
          problem,
          reconnectAt: (service.reconnectAt as Date).toISOString(),
        });
        expect(events.at(-1)).toEqual({
          name: 'whatsapp.status',
          payload: {
            status: 'connecting',
            phoneNumber: '19876543210',
            reason,
            problem,
            at: expect.any(String),
          },
        });
        expect(await stream.next((e) => e.event === 'status')).toEqual({
          event: 'status',
          data: {
            status: 'connecting',
            phoneNumber: '19876543210',
            reason,
            problem,
            reconnectAt: (service.reconnectAt as Date).toISOString(),
          },
        });
        stream.close();
      },
    );

    it('says WhatsApp cannot be reached when no connection opens at all, and clears it once linked', async () => {
      fake.failures = 1;
      const count = fake.sockets.length;
      await (await t.owner()).post('/api/whatsapp/connect').expect(200);
      await waitFor(() => service.reconnectAt !== null, 'the backoff');
      expect(fake.sockets).toHaveLength(count);
      expect(service.view()).toMatchObject({
        status: 'connecting',
        reason: 'Could not open the WhatsApp connection; reconnecting',
        problem: 'unreachable',
      });
      t.clock.advance(RECONNECT_MAX_MS);
      expect(service.reconnectIfDue()).toBe(true);
      await waitFor(() => fake.sockets.length === count + 1, 'a socket');
      fake.latest.open('19876543210');
      expect(service.view()).toMatchObject({
        status: 'connected',
        reason: null,
        problem: null,
        reconnectAt: null,
      });
    });

    it('starts the backoff again after a connection that held for a minute', async () => {
      await connectAs();
      service.random = () => 0.5;
      for (let i = 0; i < 3; i++) {
        fake.latest.close(408);
        t.clock.advance(delay());
        service.reconnectIfDue();
        await waitFor(() => service.reconnectAt === null, 'reconnect');
      }
      fake.latest.open();
      t.clock.advance(30_000);
      fake.latest.close(408);
      expect(delay()).toBe(16_000);
      t.clock.advance(delay());
      service.reconnectIfDue();
      await waitFor(() => service.reconnectAt === null, 'reconnect');
      fake.latest.open();
      t.clock.advance(60_000);
      fake.latest.close(408);
      expect(delay()).toBe(2_000);
    });

    it.each([
      [401, LOGGED_OUT_REASON, 'logged_out', false],
      [403, FORBIDDEN_REASON, 'forbidden', true],
    ])(
      'stops on %i and shows why, without reconnecting',
      async (code, reason, problem, keepsSession) => {
        mkdirSync(join(t.config.dataDir, 'whatsapp-auth'), { recursive: true });
        writeFileSync(
          join(t.config.dataDir, 'whatsapp-auth', 'creds.json'),
          '{}',
        );
        await connectAs();
        const count = fake.sockets.length;
        fake.latest.close(code);
        expect(service.status).toBe('disconnected');
        expect(service.reconnectAt).toBeNull();
        const view = (
          await (await t.owner()).get('/api/whatsapp/status').expect(200)
        ).body;
        expect(view).toEqual({
          status: 'disconnected',
          phoneNumber: null,
          reason,
          problem,
          reconnectAt: null,
        });
        expect(events.at(-1)).toEqual({
          name: 'whatsapp.status',
          payload: {
            status: 'disconnected',
            phoneNumber: null,
            reason,
            problem,
            at: expect.any(String),
          },
        });
        t.clock.advance(RECONNECT_MAX_MS * 2);
        expect(service.reconnectIfDue()).toBe(false);
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(fake.sockets).toHaveLength(count);
        await waitFor(
          () =>
            existsSync(join(t.config.dataDir, 'whatsapp-auth')) ===
            keepsSession,
          'the session files',
        );
        // Connecting again is the owner's call, and clears the reason.
        await connectAs();
        expect(service.reason).toBeNull();
      },
    );
  });

  describe('disconnecting', () => {
    afterEach(reset);
    const authDir = () => join(t.config.dataDir, 'whatsapp-auth');

    it('ends the socket and keeps the session without clearSession', async () => {
      mkdirSync(authDir(), { recursive: true });
      writeFileSync(join(authDir(), 'creds.json'), '{}');
      const socket = await connectAs();
      const res = await (await t.owner())
        .post('/api/whatsapp/disconnect')
        .send({})
        .expect(200);
      expect(res.body).toEqual({ status: 'disconnected' });
      expect(socket.ended).toBe(true);
      expect(socket.loggedOut).toBe(false);
      expect(existsSync(join(authDir(), 'creds.json'))).toBe(true);
      expect(service.status).toBe('disconnected');
      expect(service.phoneNumber).toBeNull();
      // The socket's own close after the owner's disconnect is ignored: no reconnect.
      socket.close(428);
      expect(service.reconnectAt).toBeNull();
    });

    it('logs out and deletes the session with clearSession', async () => {
      mkdirSync(authDir(), { recursive: true });
      writeFileSync(join(authDir(), 'creds.json'), '{}');
      const socket = await connectAs();
      await (await t.owner())
        .post('/api/whatsapp/disconnect')
        .send({ clearSession: true })
        .expect(200, { status: 'disconnected' });
      expect(socket.loggedOut).toBe(true);
      expect(existsSync(authDir())).toBe(false);
      expect(service.status).toBe('disconnected');
      expect(service.reason).toBeNull();
    });

    it('rejects a clearSession that is not a boolean and keeps the link', async () => {
      const socket = await connectAs();
      const res = await (await t.owner())
        .post('/api/whatsapp/disconnect')
        .send({ clearSession: 'yes' })
        .expect(400);
      expect(res.body).toEqual({
        statusCode: 400,
        message: ['Clear session must be a boolean value'],
        error: 'Bad Request',
      });
      expect(service.status).toBe('connected');
      expect(socket.ended).toBe(false);
    });
  });

  describe('messages', () => {
    let socket: FakeWhatsAppSocket;
    beforeAll(async () => {
      socket = await connectAs('19876543210');
    });

    async function deliver(
      ...messages: Parameters<FakeWhatsAppSocket['upsert']>[0]
    ) {
      socket.upsert(messages);
      await service.settled();
    }

    it('stores each content type with the seed body', async () => {
      await deliver(
        incoming({ id: 'T1', message: { conversation: 'plain text' } }),
        incoming({
          id: 'T2',
          message: {
            extendedTextMessage: { text: 'with a link https://example.com' },
          },
        }),
        incoming({
          id: 'T3',
          message: {
            imageMessage: { caption: 'a cat', mimetype: 'image/jpeg' },
          },
        }),
        incoming({
          id: 'T4',
          message: { imageMessage: { mimetype: 'image/jpeg' } },
        }),
        incoming({ id: 'T5', message: { videoMessage: { caption: 'a dog' } } }),
        incoming({ id: 'T6', message: { videoMessage: {} } }),
        incoming({
          id: 'T7',
          message: { documentMessage: { fileName: 'report.pdf' } },
        }),
        incoming({ id: 'T8', message: { documentMessage: {} } }),
        incoming({
          id: 'T9',
          message: { audioMessage: { seconds: 4, ptt: true } },
        }),
        incoming({
          id: 'T10',
          message: { stickerMessage: { mimetype: 'image/webp' } },
        }),
        incoming({
          id: 'T11',
          message: {
            locationMessage: { degreesLatitude: 1 },
            messageContextInfo: {},
          },
        }),
        incoming({
          id: 'T12',
          message: {
            ephemeralMessage: {
              message: { extendedTextMessage: { text: 'disappearing' } },
            },
          },
        }),
      );
      const res = await (await t.owner())
        .get('/api/whatsapp/messages')
        .query({ contact: '14155551234' })
        .expect(200);
      const bodies = Object.fromEntries(
        (res.body.messages as Array<{ id: string; body: string }>).map((m) => [
          m.id,
          m.body,
        ]),
      );
      expect(bodies).toEqual({
        T1: 'plain text',
        T2: 'with a link https://example.com',
        T3: '[Image] a cat',
        T4: '[Image]',
        T5: '[Video] a dog',
        T6: '[Video]',
        T7: '[Document] report.pdf',
        T8: '[Document]',
        T9: '[Audio message]',
        T10: '[Sticker]',
        T11: '[locationMessage]',
        T12: 'disappearing',
      });
      expect(res.body.messages[0]).toEqual({
        id: 'T1',
        from: '14155551234@s.whatsapp.net',
        fromName: 'Alice',
        to: '19876543210@s.whatsapp.net',
        body: 'plain text',
        timestamp: 1_740_567_890_000,
        fromMe: false,
        isGroup: false,
      });
    });

    it('flags group and own messages, and maps LID senders to their phone digits', async () => {
      await deliver(
        incoming({
          id: 'G1',
          from: '120363025246125486@g.us',
          text: 'hello group',
          key: {
            participant: '222333444555666@lid',
            participantAlt: '447700900123@s.whatsapp.net',
          },
        }),
        {
          key: {
            remoteJid: '14155551234@s.whatsapp.net',
            fromMe: true,
            id: 'OWN1',
          },
          messageTimestamp: 1_740_567_891,
          pushName: 'Me',
          message: { conversation: 'mine' },
        },
        incoming({
          id: 'LID1',
          from: '111222333444555@lid',
          key: { remoteJidAlt: '33612345678@s.whatsapp.net' },
          text: 'via lid',
        }),
      );
      const agent = await t.owner();
      const group = (
        await agent
          .get('/api/whatsapp/messages')
          .query({ contact: '447700900123' })
          .expect(200)
      ).body.messages;
      expect(group).toEqual([
        expect.objectContaining({
          id: 'G1',
          from: '447700900123@s.whatsapp.net',
          to: '120363025246125486@g.us',
          isGroup: true,
          fromMe: false,
        }),
      ]);
      const own = (
        await agent
          .get('/api/whatsapp/messages')
          .query({ contact: '14155551234' })
          .expect(200)
      ).body.messages.at(-1);
      expect(own).toEqual(
        expect.objectContaining({
          id: 'OWN1',
          from: '19876543210@s.whatsapp.net',
          to: '14155551234@s.whatsapp.net',
          fromMe: true,
          isGroup: false,
        }),
      );
      const lid = (
        await agent
          .get('/api/whatsapp/messages')
          .query({ contact: '33612345678' })
          .expect(200)
      ).body.messages;
      expect(lid).toEqual([
        expect.objectContaining({
          id: 'LID1',
          from: '33612345678@s.whatsapp.net',
          body: 'via lid',
        }),
      ]);
      // The permission filter of the gateway works on the same digits.
      const permitted = await service.getMessages({
        limit: 100,
        onlyPhones: ['33612345678'],
      });
      expect(permitted.map((m) => m.id)).toEqual(['LID1']);
      expect(await service.getMessages({ limit: 100, onlyPhones: [] })).toEqual(
        [],
      );
    });

    it('stores a redelivered message once and announces it once; ignores append upserts', async () => {
      events.length = 0;
      await deliver(
        incoming({
          id: 'DUP1',
          from: '15550001111@s.whatsapp.net',
          text: 'once',
        }),
      );
      await deliver(
        incoming({
          id: 'DUP1',
          from: '15550001111@s.whatsapp.net',
          text: 'once',
        }),
      );
      socket.upsert(
        [
          incoming({
            id: 'HIST1',
            from: '15550001111@s.whatsapp.net',
            text: 'history',
          }),
        ],
        'append',
      );
      await service.settled();
      const messages = (
        await (await t.owner())
          .get('/api/whatsapp/messages')
          .query({ contact: '15550001111' })
          .expect(200)
      ).body.messages;
      expect(messages.map((m: { id: string }) => m.id)).toEqual(['DUP1']);
      const announced = events.filter((e) => e.name === 'whatsapp.message');
      expect(announced).toEqual([
        {
          name: 'whatsapp.message',
          payload: {
            message: expect.objectContaining({ id: 'DUP1', body: 'once' }),
            at: expect.any(String),
          },
        },
      ]);

      // One upsert (one insert) holding a stored id, the same new id twice, and another new one:
      // the new ones go in and are announced once each, the rest is dropped.
      events.length = 0;
      const from = '15550001111@s.whatsapp.net';
      socket.upsert([
        incoming({ id: 'DUP1', from, text: 'once' }),
        incoming({ id: 'BATCH1', from, text: 'first' }),
        incoming({ id: 'BATCH1', from, text: 'first again' }),
        incoming({ id: 'BATCH2', from, text: 'second' }),
      ]);
      await service.settled();
      const ids = (
        await (await t.owner())
          .get('/api/whatsapp/messages')
          .query({ contact: '15550001111' })
          .expect(200)
      ).body.messages.map(
        (m: { id: string; body: string }) => `${m.id}:${m.body}`,
      );
      expect(ids.sort()).toEqual([
        'BATCH1:first',
        'BATCH2:second',
        'DUP1:once',
      ]);
      expect(
        events
          .filter((e) => e.name === 'whatsapp.message')
          .map((e) => (e.payload as { message: { id: string } }).message.id),
      ).toEqual(['BATCH1', 'BATCH2']);
    });

    it('keeps the stored messages for the next start and hands direct messages from others to the auto-reply', async () => {
      const connection = t.app.get<Connection>(getConnectionToken());
      const stored = await connection
        .collection('whatsapp_messages')
        .findOne({ _id: 'DUP1' as never });
      // Stored as pending; the auto-reply then takes it: this sender has no permission (skipped), and the test's
      // timestamp is far in the past (stale). It is never answered either way.
      expect(stored).toMatchObject({
        _id: 'DUP1',
        phone: '15550001111',
        processing: expect.stringMatching(/^(pending|working|skipped|stale)$/),
        receivedAt: expect.any(Date),
      });
      const own = await connection
        .collection('whatsapp_messages')
        .findOne({ _id: 'OWN1' as never });
      expect(own).toMatchObject({
        phone: '14155551234',
        processing: 'skipped',
      });
    });

    it('limits /messages to 50 by default and 100 at most, newest last', async () => {
      const base = 1_750_000_000_000;
      await deliver(
        ...Array.from({ length: 120 }, (_, i) =>
          incoming({
            id: `BULK${i}`,
            from: '15557770000@s.whatsapp.net',
            text: `n${i}`,
            at: base + i * 1000,
          }),
        ),
      );
      const agent = await t.owner();
      const byDefault = (
        await agent
          .get('/api/whatsapp/messages')
          .query({ contact: '15557770000' })
          .expect(200)
      ).body.messages;
      expect(byDefault).toHaveLength(50);
      expect(byDefault[0].body).toBe('n70');
      expect(byDefault.at(-1).body).toBe('n119');
      expect(
        (
          await agent
            .get('/api/whatsapp/messages')
            .query({ contact: '15557770000', limit: 500 })
            .expect(200)
        ).body.messages,
      ).toHaveLength(100);
      expect(
        (
          await agent
            .get('/api/whatsapp/messages')
            .query({ contact: '15557770000', limit: 3 })
            .expect(200)
        ).body.messages.map((m: { body: string }) => m.body),
      ).toEqual(['n117', 'n118', 'n119']);
      // Without a contact: everything, newest last.
      const all = (await agent.get('/api/whatsapp/messages').expect(200)).body
        .messages;
      expect(all).toHaveLength(50);
      expect(all.at(-1).body).toBe('n119');
      expect(
        (
          await agent
            .get('/api/whatsapp/messages')
            .query({ contact: 'nobody' })
            .expect(200)
        ).body.messages,
      ).toEqual([]);
    });

    it.each(['abc', '0', '-3', '1.5'])(
      'rejects limit=%s with 400',
      async (limit) => {
        const res = await (await t.owner())
          .get('/api/whatsapp/messages')
          .query({ limit })
          .expect(400);
        expect(res.body.statusCode).toBe(400);
        expect(res.body.message).toEqual([
          'limit must be a positive whole number',
        ]);
      },
    );

    it('sends text to a phone number as its JID, and refuses when not connected', async () => {
      await expect(
        service.sendText('+1 (415) 555-1234', 'hi there'),
      ).resolves.toEqual({ success: true, jid: '14155551234@s.whatsapp.net' });
      await expect(
        service.sendText('120363025246125486@g.us', 'to the group'),
      ).resolves.toEqual({ success: true, jid: '120363025246125486@g.us' });
      expect(socket.sent).toEqual([
        { jid: '14155551234@s.whatsapp.net', content: { text: 'hi there' } },
        { jid: '120363025246125486@g.us', content: { text: 'to the group' } },
      ]);
      // What was sent is kept next to what was received (own and `skipped`: never auto-answered).
      const conversation = (
        await (await t.owner())
          .get('/api/whatsapp/messages')
          .query({ contact: '14155551234' })
          .expect(200)
      ).body.messages as BufferedMessage[];
      expect(
        conversation.filter((m) => m.fromMe && m.body === 'hi there'),
      ).toEqual([
        {
          id: expect.stringMatching(/^3EB0/),
          from: expect.stringMatching(/@s\.whatsapp\.net$/),
          fromName: null,
          to: '14155551234@s.whatsapp.net',
          body: 'hi there',
          timestamp: expect.any(Number),
          fromMe: true,
          isGroup: false,
        },
      ]);
      const stored = await t.app
        .get<Connection>(getConnectionToken())
        .collection('whatsapp_messages')
        .findOne({ _id: conversation.at(-1)?.id as never });
      expect(stored).toMatchObject({
        phone: '14155551234',
        processing: 'skipped',
      });
      socket.failSend = new Error('not on WhatsApp');
      await expect(service.sendText('14155551234', 'x')).rejects.toThrow(
        'WhatsApp could not send the message: not on WhatsApp',
      );
      socket.failSend = null;
      await expect(service.sendText('no digits', 'x')).rejects.toThrow(
        'Invalid phone number',
      );

      await service.disconnect(false);
      await expect(service.sendText('14155551234', 'x')).rejects.toThrow(
        NOT_CONNECTED_MESSAGE,
      );
      expect(socket.sent).toHaveLength(2);
    });
  });
});

describe('WhatsApp after a restart', () => {
  it('reconnects at boot when a saved session exists, and stays off without one', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'metatron-wa-boot-'));
    try {
      const fresh = new FakeWhatsAppSocketFactory();
      const none = await createTestApp({
        env: { DATA_DIR: dataDir },
        beforeInit: (app) =>
          (
            app.get(WhatsAppSocketFactory) as ReplaceableSocketFactory
          ).replaceWith(fresh),
      });
      expect(none.app.get(WhatsAppService).status).toBe('disconnected');
      expect(fresh.sockets).toHaveLength(0);
      await none.close();

      mkdirSync(join(dataDir, 'whatsapp-auth'), { recursive: true });
      writeFileSync(
        join(dataDir, 'whatsapp-auth', 'creds.json'),
        '{"registered":true}',
      );
      const saved = new FakeWhatsAppSocketFactory();
      const t = await createTestApp({
        env: { DATA_DIR: dataDir },
        beforeInit: (app) =>
          (
            app.get(WhatsAppSocketFactory) as ReplaceableSocketFactory
          ).replaceWith(saved),
      });
      try {
        const service = t.app.get(WhatsAppService);
        expect(service.status).toBe('connecting');
        await waitFor(() => saved.sockets.length === 1, 'the boot socket');
        saved.latest.open('19876543210');
        expect(
          (await (await t.owner()).get('/api/whatsapp/status').expect(200))
            .body,
        ).toMatchObject({ status: 'connected', phoneNumber: '19876543210' });
      } finally {
        await t.close();
      }
      expect(saved.latest.ended).toBe(true);
      expect(saved.latest.loggedOut).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/**
 * A local stand-in for OpenAI's Realtime API (GA interface), scripted per test.
 *
 * One HTTP server on 127.0.0.1:
 * - `POST /v1/realtime/calls` (multipart `sdp` + `session`): records the call and answers `201`
 *   with an SDP answer and `Location: /v1/realtime/calls/<id>`. The answer comes from a werift
 *   peer (a real WebRTC endpoint on loopback that sends audio back) when the offer has an audio
 *   line, else from a canned answer; `refuse` scripts a provider error instead.
 * - `GET /v1/realtime?call_id=<id>` upgraded to a WebSocket: the call's control channel, where a
 *   test sends server events (`control(id).send(...)`) and reads what the API sent.
 * - `POST /v1/realtime/calls/<id>/hangup`: records the hang-up and closes that control channel.
 *
 * Plain Node (no test framework imports): used by Jest specs, Playwright and benchmarks alike.
 */
import { randomBytes } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { answerWithPeer, type FakePeer } from './fake-peer';

export interface FakeRealtimeCall {
  callId: string;
  apiKey: string | null;
  sdp: string;
  /** The `session` form field, parsed. */
  session: Record<string, unknown>;
  hungUp: boolean;
  /** How long this server took to answer the offer (from the request's arrival to the answer sent). */
  answerMs: number;
}

export interface FakeControl {
  readonly callId: string;
  /** Every event the API sent, parsed, in order. */
  readonly received: Array<Record<string, unknown>>;
  send(event: object): void;
  /** Announces one function call the way the provider does: in all three events. */
  announceFunctionCall(call: {
    callId: string;
    name: string;
    arguments: object | string;
    responseId?: string;
  }): void;
  /** Resolves with the first received event `match` accepts (waiting up to `timeoutMs`). */
  waitFor(
    match: (event: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Drops the channel as a network failure would. */
  drop(): void;
  readonly closed: boolean;
}

export interface FakeRealtimeServer {
  url: string;
  /** `OPENAI_BASE_URL` for the API under test. */
  baseUrl: string;
  calls: FakeRealtimeCall[];
  /** The next call is refused with this status and body (once). */
  refuse(status: number, body: object): void;
  /** Delays the next answers by `ms` (the provider's own answer time, for the bench). */
  answerDelayMs: number;
  /** Resolves once the API opened the call's control channel. */
  control(callId: string, timeoutMs?: number): Promise<FakeControl>;
  /** The werift peers that answered offers (their audio is flowing while the call lives). */
  peers: FakePeer[];
  reset(): void;
  close(): Promise<void>;
}

const CANNED_ANSWER = [
  'v=0',
  'o=- 4227147428 1719357865 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'a=group:BUNDLE 0 1',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111',
  'c=IN IP4 127.0.0.1',
  'a=mid:0',
  'a=setup:active',
  'a=rtcp-mux',
  'a=rtpmap:111 opus/48000/2',
  'm=application 9 UDP/DTLS/SCTP webrtc-datachannel',
  'a=mid:1',
  'a=sctp-port:5000',
  '',
].join('\r\n');

export async function startFakeRealtimeServer(): Promise<FakeRealtimeServer> {
  const calls: FakeRealtimeCall[] = [];
  const controls = new Map<string, FakeControlImpl>();
  const waiting = new Map<string, Array<(c: FakeControl) => void>>();
  const peers: FakePeer[] = [];
  let refusal: { status: number; body: object } | null = null;
  const sockets = new Set<Socket>();

  const server: Server = createServer((req, res) => {
    void route(req, res).catch((error: Error) => {
      res.statusCode = 500;
      res.end(JSON.stringify({ error: { message: error.message } }));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const callId = url.searchParams.get('call_id') ?? '';
    const call = calls.find((c) => c.callId === callId);
    if (
      url.pathname !== '/v1/realtime' ||
      !call ||
      call.hungUp ||
      bearer(req) !== call.apiKey
    ) {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const control = new FakeControlImpl(callId, ws);
      controls.set(callId, control);
      for (const resolve of waiting.get(callId) ?? []) resolve(control);
      waiting.delete(callId);
      control.send({
        type: 'session.created',
        event_id: `event_${randomBytes(4).toString('hex')}`,
        session: { type: 'realtime', ...call.session },
      });
    });
  });

  const fake: FakeRealtimeServer = {
    url: '',
    baseUrl: '',
    calls,
    peers,
    answerDelayMs: 0,
    refuse(status, body) {
      refusal = { status, body };
    },
    control(callId, timeoutMs = 15_000) {
      const existing = controls.get(callId);
      if (existing) return Promise.resolve(existing);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`No control channel for ${callId} was opened`)),
          timeoutMs,
        );
        const list = waiting.get(callId) ?? [];
        list.push((c) => {
          clearTimeout(timer);
          resolve(c);
        });
        waiting.set(callId, list);
      });
    },
    reset() {
      calls.length = 0;
      refusal = null;
      fake.answerDelayMs = 0;
      for (const c of controls.values()) c.drop();
      controls.clear();
      for (const p of peers.splice(0)) p.close();
    },
    async close() {
      fake.reset();
      wss.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  async function route(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'POST' && url.pathname === '/v1/realtime/calls') {
      const arrived = performance.now();
      const body = await readBody(req);
      if (refusal) {
        const { status, body: error } = refusal;
        refusal = null;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(error));
        return;
      }
      const form = await new Request('http://127.0.0.1/', {
        method: 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? '' },
        body: new Uint8Array(body),
      }).formData();
      const sdp = form.get('sdp');
      const sessionText = form.get('session');
      if (typeof sdp !== 'string' || !sdp.startsWith('v=')) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'Invalid SDP offer' } }));
        return;
      }
      const session = JSON.parse(
        typeof sessionText === 'string' ? sessionText : '{}',
      ) as Record<string, unknown>;
      if (session['type'] !== 'realtime') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: { message: "session.type must be 'realtime'" },
          }),
        );
        return;
      }
      const callId = `rtc_${randomBytes(8).toString('hex')}`;
      const call: FakeRealtimeCall = {
        callId,
        apiKey: bearer(req),
        sdp,
        session,
        hungUp: false,
        answerMs: 0,
      };
      calls.push(call);
      let answer = CANNED_ANSWER;
      if (/^m=audio /m.test(sdp) && /a=ice-ufrag:/.test(sdp)) {
        const peer = await answerWithPeer(sdp);
        peers.push(peer);
        answer = peer.answer;
      }
      if (fake.answerDelayMs > 0)
        await new Promise((r) => setTimeout(r, fake.answerDelayMs));
      res.writeHead(201, {
        'content-type': 'application/sdp',
        location: `/v1/realtime/calls/${callId}`,
      });
      res.end(answer);
      call.answerMs = performance.now() - arrived;
      return;
    }
    const hangup = /^\/v1\/realtime\/calls\/([^/]+)\/hangup$/.exec(
      url.pathname,
    );
    if (req.method === 'POST' && hangup) {
      await readBody(req);
      const call = calls.find((c) => c.callId === hangup[1]);
      if (!call || bearer(req) !== call.apiKey) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'Unknown call' } }));
        return;
      }
      call.hungUp = true;
      controls.get(call.callId)?.drop();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'Not found' } }));
  }

  await new Promise<void>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve()),
  );
  const { port } = server.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}`;
  fake.baseUrl = `${fake.url}/v1`;
  return fake;
}

class FakeControlImpl implements FakeControl {
  readonly received: Array<Record<string, unknown>> = [];
  private readonly listeners = new Set<() => void>();
  closed = false;

  constructor(
    readonly callId: string,
    private readonly ws: WebSocket,
  ) {
    ws.on('message', (data) => {
      try {
        this.received.push(JSON.parse(String(data)) as Record<string, unknown>);
      } catch {
        this.received.push({ type: '<malformed>', raw: String(data) });
      }
      for (const listener of this.listeners) listener();
    });
    ws.on('close', () => {
      this.closed = true;
      for (const listener of this.listeners) listener();
    });
  }

  send(event: object): void {
    this.ws.send(JSON.stringify(event));
  }

  announceFunctionCall(call: {
    callId: string;
    name: string;
    arguments: object | string;
    responseId?: string;
  }): void {
    const args =
      typeof call.arguments === 'string'
        ? call.arguments
        : JSON.stringify(call.arguments);
    const responseId = call.responseId ?? `resp_${call.callId}`;
    const item = {
      id: `item_${call.callId}`,
      type: 'function_call',
      status: 'completed',
      call_id: call.callId,
      name: call.name,
      arguments: args,
    };
    this.send({ type: 'response.created', response: { id: responseId } });
    this.send({
      type: 'response.function_call_arguments.done',
      response_id: responseId,
      item_id: item.id,
      output_index: 0,
      call_id: call.callId,
      name: call.name,
      arguments: args,
    });
    this.send({
      type: 'response.output_item.done',
      response_id: responseId,
      output_index: 0,
      item,
    });
    this.send({
      type: 'response.done',
      response: {
        id: responseId,
        status: 'completed',
        output: [item],
        usage: {
          total_tokens: 30,
          input_tokens: 20,
          output_tokens: 10,
          input_token_details: { text_tokens: 12, audio_tokens: 8 },
          output_token_details: { text_tokens: 10, audio_tokens: 0 },
        },
      },
    });
  }

  waitFor(
    match: (event: Record<string, unknown>) => boolean,
    timeoutMs = 15_000,
  ): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.received.find(match);
        if (found) {
          cleanup();
          resolve(found);
        } else if (this.closed) {
          cleanup();
          reject(new Error('The control channel closed first'));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(
            `No matching event; received: ${this.received.map((e) => String(e['type'])).join(', ')}`,
          ),
        );
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
      check();
    });
  }

  drop(): void {
    this.ws.terminate();
  }
}

function bearer(req: IncomingMessage): string | null {
  const header = req.headers['authorization'];
  return typeof header === 'string' && header.startsWith('Bearer ')
    ? header.slice(7)
    : null;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

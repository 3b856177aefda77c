/**
 * A local stand-in for Gemini Live (`BidiGenerateContent` over a WebSocket), scripted per test.
 *
 * One HTTP server on 127.0.0.1 whose upgrades on
 * `/ws/google.ai.generativelanguage.<version>.GenerativeService.BidiGenerateContent?key=<key>`
 * (the URL `@google/genai` builds from its `httpOptions.baseUrl`) become sessions:
 * - the first client message must be `{ setup }`; the server answers `{ setupComplete: {} }`,
 *   or, with a wrong key, closes with 1007 as Gemini does;
 * - a `setup.sessionResumption.handle` this server issued resumes that conversation
 *   (`resumedFrom`); an unknown handle is refused (1008);
 * - everything else the client sends (`realtimeInput`, `toolResponse`, ...) is recorded; a test
 *   sends server messages (`serverContent`, `toolCall`, `sessionResumptionUpdate`, `goAway`,
 *   `usageMetadata`) with `send`, or the helpers that shape them as Gemini does.
 *
 * Plain Node (no test framework imports): for Jest specs, Playwright and benchmarks alike.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

const BIDI_PATH =
  /^\/+ws\/google\.ai\.generativelanguage\.(v1[a-z0-9]*)\.GenerativeService\.BidiGenerateContent$/;

export interface FakeLiveSession {
  readonly index: number;
  readonly apiKey: string | null;
  /** The `setup` message as sent. */
  readonly setup: Record<string, unknown>;
  /** The handle this session resumed from, if any. */
  readonly resumedFrom: string | null;
  /** Every message after the setup, parsed, in order. */
  readonly received: Array<Record<string, unknown>>;
  /** Bytes of microphone PCM received in `realtimeInput.audio`. */
  readonly audioBytes: number;
  readonly closed: boolean;
  /** Names of the function declarations in the setup. */
  toolNames(): string[];
  send(message: object): void;
  /** A frame as it is (a malformed one, for instance). */
  sendRaw(text: string): void;
  /** The model's audio (PCM16 24 kHz) as a `serverContent.modelTurn` part. */
  sendAudio(pcm: Buffer): void;
  /** A resumable point: a fresh handle this server will accept in a later setup. */
  sendResumable(): string;
  waitFor(
    match: (message: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Resolves once at least `bytes` of microphone audio arrived. */
  waitForAudio(bytes: number, timeoutMs?: number): Promise<void>;
  close(code?: number, reason?: string): void;
}

export interface FakeGeminiLiveServer {
  /** What `httpOptions.baseUrl` (or GOOGLE_GEMINI_BASE_URL) should be. */
  baseUrl: string;
  readonly sessions: FakeLiveSession[];
  /** Resolves with the next session (after its setup), or one already opened and not yet taken. */
  nextSession(timeoutMs?: number): Promise<FakeLiveSession>;
  close(): Promise<void>;
}

export async function startFakeGeminiLiveServer(
  options: { apiKey?: string } = {},
): Promise<FakeGeminiLiveServer> {
  const handles = new Set<string>();
  const sessions: FakeLiveSession[] = [];
  const untaken: FakeLiveSession[] = [];
  const waiting: Array<(session: FakeLiveSession) => void> = [];
  const server: Server = createServer((_req, res) => {
    res.statusCode = 404;
    res.end();
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req: IncomingMessage, socket, head) => {
    // The SDK joins its base URL's trailing slash and `/ws/...`: `//ws/...` is not a URL to resolve.
    const [pathname, query = ''] = (req.url ?? '/').split('?');
    const url = { pathname, searchParams: new URLSearchParams(query) };
    if (!BIDI_PATH.test(url.pathname)) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) =>
      accept(ws, url.searchParams.get('key')),
    );
  });

  const accept = (ws: WebSocket, apiKey: string | null) => {
    const received: Array<Record<string, unknown>> = [];
    const listeners = new Set<() => void>();
    let setup: Record<string, unknown> | null = null;
    let audioBytes = 0;
    let closed = false;
    ws.on('close', () => {
      closed = true;
      listeners.forEach((l) => l());
    });
    const session: FakeLiveSession = {
      index: sessions.length,
      apiKey,
      get setup() {
        return setup ?? {};
      },
      resumedFrom: null,
      received,
      get audioBytes() {
        return audioBytes;
      },
      get closed() {
        return closed;
      },
      toolNames() {
        const tools = (setup?.['tools'] ?? []) as Array<{
          functionDeclarations?: Array<{ name?: string }>;
        }>;
        return tools.flatMap((t) =>
          (t.functionDeclarations ?? []).map((d) => String(d.name)),
        );
      },
      send(message) {
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
      },
      sendRaw(text) {
        if (ws.readyState === ws.OPEN) ws.send(text);
      },
      sendAudio(pcm) {
        session.send({
          serverContent: {
            modelTurn: {
              parts: [
                {
                  inlineData: {
                    mimeType: 'audio/pcm;rate=24000',
                    data: pcm.toString('base64'),
                  },
                },
              ],
            },
          },
        });
      },
      sendResumable() {
        const handle = `fake-handle-${randomBytes(6).toString('hex')}`;
        handles.add(handle);
        session.send({
          sessionResumptionUpdate: { newHandle: handle, resumable: true },
        });
        return handle;
      },
      waitFor(match, timeoutMs = 15_000) {
        return new Promise((resolve, reject) => {
          const check = () => {
            const found = received.find(match);
            if (found) {
              done();
              resolve(found);
            } else if (closed) {
              done();
              reject(new Error('the session closed before the message came'));
            }
          };
          const timer = setTimeout(() => {
            done();
            reject(new Error('timed out waiting for a client message'));
          }, timeoutMs);
          const done = () => {
            clearTimeout(timer);
            listeners.delete(check);
          };
          listeners.add(check);
          check();
        });
      },
      waitForAudio(bytes, timeoutMs) {
        return session
          .waitFor(() => audioBytes >= bytes, timeoutMs)
          .then(() => undefined);
      },
      close(code = 1000, reason = '') {
        ws.close(code, reason);
      },
    };
    ws.on('message', (data) => {
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(String(data)) as Record<string, unknown>;
      } catch {
        ws.close(1007, 'Request contains an invalid argument.');
        return;
      }
      if (!setup) {
        if (!message['setup'] || typeof message['setup'] !== 'object') {
          ws.close(1007, 'The first message must be a setup.');
          return;
        }
        if (options.apiKey && apiKey !== options.apiKey) {
          ws.close(1007, 'API key not valid. Please pass a valid API key.');
          return;
        }
        setup = message['setup'] as Record<string, unknown>;
        const resumption = setup['sessionResumption'] as
          | { handle?: string }
          | undefined;
        if (resumption?.handle) {
          if (!handles.has(resumption.handle)) {
            ws.close(1008, 'The session handle is not valid.');
            return;
          }
          (session as { resumedFrom: string | null }).resumedFrom =
            resumption.handle;
        }
        sessions.push(session);
        ws.send(JSON.stringify({ setupComplete: {} }));
        const taker = waiting.shift();
        if (taker) taker(session);
        else untaken.push(session);
        return;
      }
      const audio = (
        message['realtimeInput'] as { audio?: { data?: string } } | undefined
      )?.audio?.data;
      if (typeof audio === 'string')
        audioBytes += Buffer.from(audio, 'base64').length;
      received.push(message);
      listeners.forEach((l) => l());
    });
  };

  await new Promise<void>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve()),
  );
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    sessions,
    nextSession(timeoutMs = 15_000) {
      const ready = untaken.shift();
      if (ready) return Promise.resolve(ready);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          const at = waiting.indexOf(take);
          if (at >= 0) waiting.splice(at, 1);
          reject(new Error('no Gemini Live session was opened'));
        }, timeoutMs);
        const take = (session: FakeLiveSession) => {
          clearTimeout(timer);
          resolve(session);
        };
        waiting.push(take);
      });
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

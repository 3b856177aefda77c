import { TestBed } from '@angular/core/testing';
import { Router, provideRouter } from '@angular/router';
import { provideHttpClient } from '@angular/common/http';
import { provideHttpClientTesting } from '@angular/common/http/testing';
import { ReadableStream } from 'node:stream/web';
import { TextDecoder as NodeTextDecoder, TextEncoder } from 'node:util';
import { AuthStore } from '../auth/auth-store';
import { ServerStatus } from '../core/server-status';
import {
  ChatSendError,
  ChatStream,
  type ChatStreamEvent,
  FETCH,
} from './chat-stream';

const encoder = new TextEncoder();

/** A streaming body that the test feeds chunk by chunk. */
function controllableBody() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => (controller = c),
  });
  return {
    body,
    write: (text: string) => controller.enqueue(encoder.encode(text)),
    close: () => controller.close(),
  };
}

function response(
  status: number,
  init: { body?: unknown; json?: unknown },
): Response {
  return {
    ok: status >= 200 && status < 300,
    status,
    body: init.body ?? null,
    json: async () => {
      if (init.json === undefined) throw new SyntaxError('not json');
      return init.json;
    },
  } as unknown as Response;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('ChatStream', () => {
  let fetchMock: jest.Mock<Promise<Response>, [string, RequestInit]>;
  let stream: ChatStream;
  const hadDecoder = 'TextDecoder' in globalThis;

  beforeAll(() => {
    if (!hadDecoder)
      Object.assign(globalThis, { TextDecoder: NodeTextDecoder });
  });
  afterAll(() => {
    if (!hadDecoder)
      delete (globalThis as { TextDecoder?: unknown }).TextDecoder;
  });

  beforeEach(() => {
    fetchMock = jest.fn<Promise<Response>, [string, RequestInit]>();
    TestBed.configureTestingModule({
      providers: [
        provideHttpClient(),
        provideHttpClientTesting(),
        provideRouter([]),
        { provide: FETCH, useValue: fetchMock },
      ],
    });
    stream = TestBed.inject(ChatStream);
  });

  it('posts the message with the session cookie and streams the typed reply events, however the body is chunked', async () => {
    const { body, write, close } = controllableBody();
    fetchMock.mockResolvedValue(response(200, { body }));
    const events: ChatStreamEvent[] = [];
    let completed = false;
    stream.send('chat 1', { content: 'Hi' }).subscribe({
      next: (e) => events.push(e),
      complete: () => (completed = true),
    });
    await tick();

    const [url, init] = fetchMock.mock.calls[0];
    expect(url).toBe('/api/chats/chat%201/messages');
    expect(init.method).toBe('POST');
    expect(init.credentials).toBe('same-origin');
    expect(init.headers).toMatchObject({
      Accept: 'text/event-stream',
      'Content-Type': 'application/json',
    });
    expect(JSON.parse(init.body as string)).toEqual({ content: 'Hi' });

    write(
      ': keep-alive\n\nevent: message\ndata: {"id":"m1","role":"user","content":"Hi"}\n\nevent: del',
    );
    write('ta\ndata: {"text":"Hel');
    write(
      'lo"}\n\nevent: surprise\ndata: {}\n\nevent: delta\ndata: not json\n\n',
    );
    write('event: done\r\ndata: {"messageId":"m2"}\r\n\r\n');
    close();
    await tick();
    await tick();

    expect(events).toEqual([
      { type: 'message', data: { id: 'm1', role: 'user', content: 'Hi' } },
      { type: 'delta', data: { text: 'Hello' } },
      { type: 'done', data: { messageId: 'm2' } },
    ]);
    expect(completed).toBe(true);
  });

  it('regenerates a reply through its own route, with the edited text, and streams the same events', async () => {
    const { body, write, close } = controllableBody();
    fetchMock.mockResolvedValue(response(200, { body }));
    const events: ChatStreamEvent[] = [];
    stream
      .regenerate('c1', 'm2', { content: 'Edited' })
      .subscribe((e) => events.push(e));
    await tick();
    const [url, init] = fetchMock.mock.calls[0];
    expect(url).toBe('/api/chats/c1/messages/m2/regenerate');
    expect(init.method).toBe('POST');
    expect(JSON.parse(init.body as string)).toEqual({ content: 'Edited' });
    write('event: delta\ndata: {"text":"Hi"}\n\n');
    close();
    await tick();
    await tick();
    expect(events).toEqual([{ type: 'delta', data: { text: 'Hi' } }]);

    fetchMock.mockResolvedValue(
      response(409, {
        json: {
          statusCode: 409,
          message:
            'Only the latest reply of a chat can be regenerated: messages came after this one.',
        },
      }),
    );
    const error = await new Promise<unknown>((resolve) =>
      stream.regenerate('c1', 'm2').subscribe({ error: resolve }),
    );
    expect(error).toBeInstanceOf(ChatSendError);
    expect((error as ChatSendError).message).toMatch(/Only the latest reply/);
    expect(JSON.parse(fetchMock.mock.calls[1][1].body as string)).toEqual({});
  });

  it('fails with the server message when the message is refused before the stream starts', async () => {
    fetchMock.mockResolvedValue(
      response(400, {
        json: {
          statusCode: 400,
          message: 'No model configured. Choose one in Settings.',
        },
      }),
    );
    const error = await new Promise<unknown>((resolve) =>
      stream.send('c1', { content: 'Hi' }).subscribe({ error: resolve }),
    );
    expect(error).toBeInstanceOf(ChatSendError);
    expect((error as ChatSendError).status).toBe(400);
    expect((error as ChatSendError).message).toBe(
      'No model configured. Choose one in Settings.',
    );
  });

  it('sends the owner to the login when the session expired', async () => {
    const navigate = jest
      .spyOn(TestBed.inject(Router), 'navigate')
      .mockResolvedValue(true);
    fetchMock.mockResolvedValue(
      response(401, { json: { statusCode: 401, message: 'Unauthorized' } }),
    );
    await new Promise((resolve) =>
      stream.send('c1', { content: 'Hi' }).subscribe({ error: resolve }),
    );
    expect(TestBed.inject(AuthStore).authenticated()).toBe(false);
    expect(navigate).toHaveBeenCalledWith(['/login'], expect.anything());
  });

  it('raises the app-wide banner when the server cannot be reached', async () => {
    fetchMock.mockRejectedValue(new TypeError('Failed to fetch'));
    const error = await new Promise<unknown>((resolve) =>
      stream.send('c1', { content: 'Hi' }).subscribe({ error: resolve }),
    );
    expect((error as ChatSendError).status).toBe(0);
    expect(TestBed.inject(ServerStatus).problem()?.kind).toBe('unreachable');
  });

  it('aborts the request when the subscriber leaves', async () => {
    const { body } = controllableBody();
    fetchMock.mockResolvedValue(response(200, { body }));
    const sub = stream.send('c1', { content: 'Hi' }).subscribe();
    await tick();
    const signal = fetchMock.mock.calls[0][1].signal as AbortSignal;
    expect(signal.aborted).toBe(false);
    sub.unsubscribe();
    expect(signal.aborted).toBe(true);
  });
});

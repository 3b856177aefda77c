import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProviderFetch } from './provider-fetch';
import { asError, failedCall, OpenAiClient } from './openai-client';

/** What the local server does with the next request. */
type Answer =
  | { status: number; body: string; headers?: Record<string, string> }
  | { silent: true };

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const BODY = Buffer.from(
  JSON.stringify({ model: 'gpt-test', stream: true, messages: [] }),
);

describe('OpenAiClient.postJsonStream answers as the SDK’s client.post(…).asResponse()', () => {
  let server: Server;
  let baseURL: string;
  let answer: Answer;
  const seen: Seen[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        seen.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
        });
        if ('silent' in answer) return; // never answers: the client's time limit ends it
        res.writeHead(answer.status, {
          'content-type': 'application/json',
          ...answer.headers,
        });
        res.end(answer.body);
      });
    });
    await new Promise<void>((listening) =>
      server.listen(0, '127.0.0.1', listening),
    );
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  });
  beforeEach(() => {
    seen.length = 0;
    answer = { status: 200, body: 'data: {"ok":true}\n\n' };
  });

  const client = (options: { timeout?: number; baseURL?: string } = {}) =>
    new OpenAiClient({
      apiKey: 'sk-test-0123456789',
      baseURL: options.baseURL ?? baseURL,
      maxRetries: 0,
      fetch: createProviderFetch({ silenceTimeoutMs: 60_000 }),
      ...(options.timeout ? { timeout: options.timeout } : {}),
    });

  /** Both ways, on the same client: the response or error of each. */
  const both = async (
    c: OpenAiClient,
    signal?: AbortSignal,
  ): Promise<[Response | Error, Response | Error]> => {
    const sdk = await c
      .post('/chat/completions', {
        body: BODY,
        headers: { 'content-type': 'application/json' },
        stream: true,
        signal,
      })
      .asResponse()
      .catch((error: Error) => error);
    const ours = await c
      .postJsonStream('/chat/completions', BODY, signal)
      .catch((error: Error) => error);
    return [sdk, ours];
  };

  /** An error as far as the adapter reads it: class, status, message, body, code, headers. */
  const shape = (error: Response | Error) => {
    expect(error).toBeInstanceOf(Error);
    const e = error as Error & {
      status?: number;
      error?: unknown;
      code?: unknown;
      headers?: Headers;
    };
    return {
      class: e.constructor.name,
      message: e.message,
      status: e.status,
      error: e.error,
      code: e.code,
      requestId: e.headers?.get?.('x-request-id') ?? null,
    };
  };

  it('sends the same request: method, path, headers and body', async () => {
    const c = client();
    const [sdk, ours] = await both(c);
    // The provider fetch's Response (another realm's class inside Jest).
    expect((sdk as Response).status).toBe(200);
    expect((ours as Response).status).toBe(200);
    expect(await (ours as Response).text()).toBe(
      await (sdk as Response).text(),
    );
    const [a, b] = seen;
    expect(b.method).toBe(a.method);
    expect(b.url).toBe(a.url);
    expect(b.body).toBe(a.body);
    // The same headers, the SDK's own (key, platform, retry count) included; not the connection's.
    const drop = ({ connection, ...rest }: IncomingMessage['headers']) => {
      void connection;
      return rest;
    };
    expect(drop(b.headers)).toEqual(drop(a.headers));
    expect(b.headers.authorization).toBe('Bearer sk-test-0123456789');
  });

  it('the URL and headers are made once per path: a second call sends the same', async () => {
    const c = client();
    await c.postJsonStream('/chat/completions', BODY).then((r) => r.text());
    await c.postJsonStream('/chat/completions', BODY).then((r) => r.text());
    expect(seen[1].headers).toEqual(seen[0].headers);
    expect(seen[1].url).toBe('/v1/chat/completions');
  });

  it.each([
    [
      'a JSON error with a code',
      {
        status: 400,
        body: JSON.stringify({
          error: { message: 'Bad things', code: 'bad_thing', type: 'x' },
        }),
        headers: { 'x-request-id': 'req_1' },
      },
    ],
    [
      'a JSON body without an error key',
      { status: 401, body: JSON.stringify({ message: 'no key' }) },
    ],
    ['a body that is not JSON', { status: 429, body: 'Slow down' }],
    ['an empty body', { status: 500, body: '' }],
    ['a 404', { status: 404, body: '{"error":{"message":"Not here"}}' }],
    ['a 503', { status: 503, body: 'upstream gone' }],
  ])('%s: the same status error', async (_, reply) => {
    answer = reply;
    const [sdk, ours] = await both(client());
    expect(shape(ours)).toEqual(shape(sdk));
  });

  it('nothing listening: the same connection error', async () => {
    const closed = createServer();
    await new Promise<void>((l) => closed.listen(0, '127.0.0.1', l));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((c) => closed.close(c));
    const [sdk, ours] = await both(
      client({ baseURL: `http://127.0.0.1:${port}/v1` }),
    );
    expect(shape(ours)).toEqual(shape(sdk));
    expect(shape(ours).class).toBe('APIConnectionError');
  });

  it('no headers within the time limit: the same timeout error', async () => {
    answer = { silent: true };
    const [sdk, ours] = await both(client({ timeout: 150 }));
    // APIConnectionTimeoutError in the app; inside Jest the abort's DOMException is another realm's,
    // not an Error there, and both paths name it a connection error alike.
    expect(shape(ours)).toEqual(shape(sdk));
    expect(shape(ours).class).toMatch(/^APIConnection(Timeout)?Error$/);
    expect(seen).toHaveLength(2);
  });

  it('a signal aborted before the call or while it waits: the same abort error', async () => {
    const c = client();
    const before = await both(c, AbortSignal.abort());
    expect(shape(before[1])).toEqual(shape(before[0]));
    expect(shape(before[1]).class).toBe('APIUserAbortError');
    answer = { silent: true };
    const during = await both(c, AbortSignal.timeout(100));
    expect(shape(during[1])).toEqual(shape(during[0]));
    expect(shape(during[1]).class).toBe('APIUserAbortError');
  });

  it('a failure to build the request is not kept: the next call builds again', async () => {
    const c = client();
    const build = jest
      .spyOn(c, 'buildRequest')
      .mockRejectedValueOnce(new Error('no key yet'));
    await expect(c.postJsonStream('/chat/completions', BODY)).rejects.toThrow(
      'no key yet',
    );
    const response = await c.postJsonStream('/chat/completions', BODY);
    expect(response.status).toBe(200);
    await response.text();
    expect(build).toHaveBeenCalledTimes(2);
  });
});

describe('failedCall: the SDK error for a fetch that failed', () => {
  const abortError = () => {
    const error = new Error('This operation was aborted');
    error.name = 'AbortError';
    return error;
  };
  it.each([
    [
      'the time limit’s abort (AbortError)',
      abortError(),
      'APIConnectionTimeoutError',
    ],
    [
      'a message that says it timed out',
      new Error('connect ETIMEDOUT: timed out'),
      'APIConnectionTimeoutError',
    ],
    [
      'a cause that says it timed out',
      new TypeError('fetch failed', {
        cause: new Error('Connect Timeout Error'),
      }),
      'APIConnectionTimeoutError',
    ],
    [
      'a refused connection',
      new TypeError('fetch failed', {
        cause: new Error('connect ECONNREFUSED 127.0.0.1:1'),
      }),
      'APIConnectionError',
    ],
    ['a cut reply', new TypeError('terminated'), 'APIConnectionError'],
  ])('%s → %s', (_, error, expected) => {
    const failure = failedCall(error);
    expect(failure.constructor.name).toBe(expected);
    if (expected === 'APIConnectionError')
      expect((failure as Error & { cause?: unknown }).cause).toBe(error);
  });

  it('the caller’s abort wins over any other reading', () => {
    expect(failedCall(abortError(), AbortSignal.abort()).constructor.name).toBe(
      'APIUserAbortError',
    );
    expect(
      failedCall(new TypeError('fetch failed'), AbortSignal.abort()).constructor
        .name,
    ).toBe('APIUserAbortError');
  });

  it('asError keeps an Error, names a plain error-shaped object, and wraps anything else', () => {
    const error = new Error('x');
    expect(asError(error)).toBe(error);
    expect(asError({ a: 1 }).message).toBe('{"a":1}');
    expect(asError('text').message).toBe('text');
  });
});

import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  startFakeLlmServer,
  type FakeLlmServer,
} from '../../../../../tools/fake-llm/fake-llm-server';
import { createRecordingSink } from '../../../../../tools/fake-llm/recording-sink';
import {
  LlmProviderError,
  type LlmToolSpec,
  type LlmTurnRequest,
} from '../llm-adapter';
import { GeminiAdapter } from './gemini-adapter';

const KEY = 'AIzaSyTestSecretKey0123456789';

const TOOLS: LlmToolSpec[] = [
  {
    name: 'db_query',
    description: 'Run a database operation',
    parameters: {
      type: 'object',
      properties: {
        operation: { type: 'string' },
        collection: { type: 'string' },
      },
      required: ['operation', 'collection'],
      additionalProperties: false,
    },
  },
  {
    name: 'save_memory',
    description: 'Replace the memory',
    parameters: { type: 'object', properties: { content: { type: 'string' } } },
  },
];

let server: FakeLlmServer;

beforeAll(async () => {
  server = await startFakeLlmServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => server.reset());

function adapter(
  baseUrl: string | undefined = server.geminiBaseUrl,
): GeminiAdapter {
  return new GeminiAdapter({ apiKey: KEY, baseUrl });
}

function turn(overrides: Partial<LlmTurnRequest> = {}): LlmTurnRequest {
  return {
    model: 'gemini-2.5-flash',
    systemPrompt: 'You are Metatron.',
    history: [],
    userMessage: 'Hello?',
    tools: null,
    maxToolRounds: 5,
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function failure(promise: Promise<unknown>): Promise<LlmProviderError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(LlmProviderError);
    return error as LlmProviderError;
  }
  throw new Error('expected the turn to fail');
}

/** The contents Gemini received in request `i`. */
function contents(i: number): unknown[] {
  return server.gemini.requests[i].body.contents;
}

describe('GeminiAdapter', () => {
  it('streams a plain reply in order and returns the usage, without tools', async () => {
    server.gemini.enqueue({
      text: ['Hel', 'lo', ' world'],
      usage: { promptTokens: 7, completionTokens: 3 },
    });
    const sink = createRecordingSink();

    const result = await adapter().streamTurn(turn(), sink);

    expect(sink.deltas).toEqual(['Hel', 'lo', ' world']);
    expect(result).toEqual({
      usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 },
    });
    const [request] = server.gemini.requests;
    expect(request.path).toBe(
      '/v1beta/models/gemini-2.5-flash:streamGenerateContent',
    );
    expect(request.query).toEqual({ alt: 'sse' });
    expect(request.apiKey).toBe(KEY);
    expect(request.body.systemInstruction).toEqual({
      role: 'user',
      parts: [{ text: 'You are Metatron.' }],
    });
    expect(request.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hello?' }] },
    ]);
    expect(request.body.tools).toBeUndefined();
    expect(request.body.toolConfig).toBeUndefined();
  });

  it('runs one function call, wraps an array result as { data } and sends it back', async () => {
    server.gemini.enqueue(
      {
        text: ['Let me look.'],
        toolCalls: [
          {
            name: 'db_query',
            arguments: { operation: 'find', collection: 'contacts' },
          },
        ],
      },
      { text: ['Found', ' Ann.'] },
    );
    const sink = createRecordingSink(() => '[{"name":"Ann"}]');

    const result = await adapter().streamTurn(turn({ tools: TOOLS }), sink);

    expect(
      sink.toolCalls.map(({ id, name, arguments: args }) => ({
        id,
        name,
        args,
      })),
    ).toEqual([
      {
        id: 'call_1',
        name: 'db_query',
        args: { operation: 'find', collection: 'contacts' },
      },
    ]);
    expect(sink.text).toBe('Let me look.Found Ann.');
    expect(result).toEqual({
      usage: { inputTokens: 20, outputTokens: 10, totalTokens: 30 },
    });

    const first = server.gemini.requests[0].body;
    expect(first.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'db_query',
            description: 'Run a database operation',
            parametersJsonSchema: TOOLS[0].parameters,
          },
          {
            name: 'save_memory',
            description: 'Replace the memory',
            parametersJsonSchema: TOOLS[1].parameters,
          },
        ],
      },
    ]);
    expect(first.toolConfig).toEqual({
      functionCallingConfig: { mode: 'AUTO' },
    });
    // The model's id-less call is answered without an id.
    expect(contents(1).slice(1)).toEqual([
      { role: 'model', parts: [{ text: 'Let me look.' }] },
      {
        role: 'model',
        parts: [
          {
            functionCall: {
              name: 'db_query',
              args: { operation: 'find', collection: 'contacts' },
            },
          },
        ],
      },
      {
        role: 'user',
        parts: [
          {
            functionResponse: {
              name: 'db_query',
              response: { data: [{ name: 'Ann' }] },
            },
          },
        ],
      },
    ]);
  });

  it("uses the call's own id when Gemini gives one and echoes it in the response", async () => {
    server.gemini.enqueue(
      {
        toolCalls: [
          { id: 'fc-42', name: 'save_memory', arguments: { content: 'x' } },
        ],
      },
      { text: ['Saved.'] },
    );
    const sink = createRecordingSink(() => 'plain words');

    await adapter().streamTurn(turn({ tools: TOOLS }), sink);

    expect(sink.toolCalls[0].id).toBe('fc-42');
    expect(contents(1).at(-1)).toEqual({
      role: 'user',
      parts: [
        {
          functionResponse: {
            id: 'fc-42',
            name: 'save_memory',
            response: { result: 'plain words' },
          },
        },
      ],
    });
  });

  it('runs several calls of one reply in order, one at a time, and answers them together', async () => {
    server.gemini.enqueue(
      {
        toolCalls: [
          {
            name: 'db_query',
            arguments: { operation: 'find', collection: 'a' },
          },
          { name: 'save_memory', arguments: { content: 'x' } },
          {
            name: 'db_query',
            arguments: { operation: 'find', collection: 'b' },
          },
        ],
      },
      { text: ['Done.'] },
    );
    const sink = createRecordingSink(async (call) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return JSON.stringify({ ran: call.id });
    });

    await adapter().streamTurn(turn({ tools: TOOLS }), sink);

    expect(sink.toolCalls.map((c) => [c.id, c.name])).toEqual([
      ['call_1', 'db_query'],
      ['call_2', 'save_memory'],
      ['call_3', 'db_query'],
    ]);
    for (let i = 1; i < sink.toolCalls.length; i++) {
      expect(sink.toolCalls[i].startedAt).toBeGreaterThanOrEqual(
        sink.toolCalls[i - 1].endedAt ?? Infinity,
      );
    }
    expect(contents(1).at(-1)).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { name: 'db_query', response: { ran: 'call_1' } } },
        {
          functionResponse: {
            name: 'save_memory',
            response: { ran: 'call_2' },
          },
        },
        { functionResponse: { name: 'db_query', response: { ran: 'call_3' } } },
      ],
    });
  });

  it('passes a tool error back to the model and goes on', async () => {
    server.gemini.enqueue(
      { toolCalls: [{ name: 'save_memory', arguments: { content: 'x' } }] },
      { text: ['Sorry, that failed.'] },
    );
    const sink = createRecordingSink(() => '{"error":"Memory is full"}');

    await expect(
      adapter().streamTurn(turn({ tools: TOOLS }), sink),
    ).resolves.toBeDefined();

    expect(sink.text).toBe('Sorry, that failed.');
    expect(contents(1).at(-1)).toEqual({
      role: 'user',
      parts: [
        {
          functionResponse: {
            name: 'save_memory',
            response: { error: 'Memory is full' },
          },
        },
      ],
    });
  });

  it.each([
    [401, 'auth', 'The Gemini API key was rejected (401).'],
    [403, 'auth', 'The Gemini API key was rejected (403).'],
    [
      429,
      'rate-limit',
      'Gemini rate limit reached (429). Try again in a moment.',
    ],
    [500, 'server', 'Gemini had a server error (500).'],
    [503, 'server', 'Gemini had a server error (503).'],
  ])('maps HTTP %i to %s without the key', async (status, kind, message) => {
    for (const tools of [null, TOOLS]) {
      server.gemini.enqueue({ status, message: `Key ${KEY} refused` });
      const error = await failure(
        adapter().streamTurn(turn({ tools }), createRecordingSink()),
      );
      expect(error).toMatchObject({ kind, message, status });
      expect(error.message).not.toContain(KEY);
    }
    // One request per turn: no SDK retry (no retryOptions) and no automatic continuation.
    expect(server.gemini.requests).toHaveLength(2);
  });

  it("maps Gemini's 400 for an invalid key to auth", async () => {
    server.gemini.enqueue({
      status: 400,
      message: 'API key not valid. Please pass a valid API key.',
    });
    const error = await failure(
      adapter().streamTurn(turn(), createRecordingSink()),
    );
    expect(error).toMatchObject({
      kind: 'auth',
      status: 400,
      message: 'The Gemini API key was rejected (400).',
    });
  });

  it('maps another 400 to bad-request with the provider message, the key removed', async () => {
    server.gemini.enqueue({
      status: 400,
      message: `* GenerateContentRequest.contents: contents is not specified (key=${KEY})`,
    });
    const error = await failure(
      adapter().streamTurn(turn(), createRecordingSink()),
    );
    expect(error.kind).toBe('bad-request');
    expect(error.message).toBe(
      'Gemini rejected the request (400): * GenerateContentRequest.contents: contents is not specified (key=••••)',
    );
  });

  it.each([
    ['plain', null],
    ['with tools', TOOLS],
  ])(
    'keeps the partial text and fails with network when the stream is cut (%s)',
    async (_label, tools) => {
      server.gemini.enqueue({ text: ['Hel', 'lo', ' never'], cutAfter: 2 });
      const sink = createRecordingSink();

      const error = await failure(adapter().streamTurn(turn({ tools }), sink));

      expect(error.kind).toBe('network');
      expect(error.message).toBe('The connection to Gemini was cut mid-reply.');
      expect(sink.deltas).toEqual(['Hel', 'lo']);
      expect(server.gemini.requests).toHaveLength(1);
    },
  );

  it('fails with network when the stream is cut before any chunk, without re-sending', async () => {
    server.gemini.enqueue({ text: ['never'], cutAfter: 0 });
    const error = await failure(
      adapter().streamTurn(turn(), createRecordingSink()),
    );
    expect(error.kind).toBe('network');
    expect(server.gemini.requests).toHaveLength(1);
  });

  it('fails with network when nothing listens at the base URL', async () => {
    const port = await closedPort();
    const error = await failure(
      adapter(`http://127.0.0.1:${port}`).streamTurn(
        turn(),
        createRecordingSink(),
      ),
    );
    expect(error.kind).toBe('network');
    expect(error.message).toBe(
      `Could not reach Gemini at 127.0.0.1:${port}: connection refused (ECONNREFUSED).`,
    );
  });

  it('stops at the tool round cap: exactly maxToolRounds rounds of tools, then toolRoundsExhausted', async () => {
    server.gemini.fallback = {
      toolCalls: [{ name: 'save_memory', arguments: { content: 'again' } }],
    };
    const sink = createRecordingSink();

    const result = await adapter().streamTurn(
      turn({ tools: TOOLS, maxToolRounds: 3 }),
      sink,
    );

    expect(result.toolRoundsExhausted).toBe(true);
    expect(sink.toolCalls.map((c) => c.id)).toEqual([
      'call_1',
      'call_2',
      'call_3',
    ]);
    expect(server.gemini.requests).toHaveLength(4);
    expect(result.usage).toEqual({
      inputTokens: 40,
      outputTokens: 20,
      totalTokens: 60,
    });
  });

  it('sends no tools and no tool config when the tool list is empty', async () => {
    server.gemini.enqueue({ text: ['Hi'] });
    await adapter().streamTurn(turn({ tools: [] }), createRecordingSink());
    expect(server.gemini.requests[0].body.tools).toBeUndefined();
    expect(server.gemini.requests[0].body.toolConfig).toBeUndefined();
  });

  it('maps earlier tool turns into functionCall / functionResponse contents and sends no system instruction for a null prompt', async () => {
    server.gemini.enqueue({ text: ['ok'] });
    await adapter().streamTurn(
      turn({
        systemPrompt: null,
        history: [
          { role: 'user', text: 'Who are my contacts?' },
          {
            role: 'assistant',
            parts: [
              { type: 'text', text: 'Let me check.' },
              {
                type: 'tool_call',
                id: 'call_1',
                name: 'db_query',
                arguments: { operation: 'find', collection: 'contacts' },
                result: '[{"name":"Ann"}]',
                error: null,
                durationMs: 4,
              },
              {
                type: 'tool_call',
                id: 'call_2',
                name: 'save_memory',
                arguments: { content: 'x' },
                result: null,
                error: 'timed out',
                durationMs: null,
              },
              { type: 'text', text: 'You know Ann.' },
            ],
          },
          { role: 'user', text: 'Save it' },
          {
            role: 'assistant',
            parts: [
              {
                type: 'tool_call',
                id: 'call_1',
                name: 'save_memory',
                arguments: { content: 'Ann' },
                result: '{"ok":true}',
                error: null,
                durationMs: 1,
              },
            ],
          },
        ],
        userMessage: 'Again?',
      }),
      createRecordingSink(),
    );

    const body = server.gemini.requests[0].body;
    expect(body.systemInstruction).toBeUndefined();
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Who are my contacts?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Let me check.' },
          {
            functionCall: {
              name: 'db_query',
              args: { operation: 'find', collection: 'contacts' },
            },
          },
          { functionCall: { name: 'save_memory', args: { content: 'x' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          {
            functionResponse: {
              name: 'db_query',
              response: { data: [{ name: 'Ann' }] },
            },
          },
          {
            functionResponse: {
              name: 'save_memory',
              response: { error: 'timed out' },
            },
          },
        ],
      },
      { role: 'model', parts: [{ text: 'You know Ann.' }] },
      { role: 'user', parts: [{ text: 'Save it' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'save_memory', args: { content: 'Ann' } } },
        ],
      },
      // A reply that ended on tool calls: its responses and the new message form one user turn.
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'save_memory', response: { ok: true } } },
          { text: 'Again?' },
        ],
      },
    ]);
  });

  it('stops promptly when aborted mid-stream', async () => {
    server.gemini.enqueue({ text: ['a', 'b', 'c', 'd'], chunkDelayMs: 400 });
    const controller = new AbortController();
    const sink = createRecordingSink();
    let abortedAt = 0;
    sink.onDelta = () => {
      abortedAt = performance.now();
      controller.abort();
    };

    const error = await failure(
      adapter().streamTurn(turn({ signal: controller.signal }), sink),
    );

    expect(performance.now() - abortedAt).toBeLessThan(100);
    expect(error.kind).toBe('aborted');
    expect(sink.deltas).toEqual(['a']);
  });

  it('stops promptly when aborted during a tool call and runs no further tool', async () => {
    server.gemini.enqueue({
      toolCalls: [
        { name: 'db_query', arguments: { operation: 'find', collection: 'a' } },
        { name: 'db_query', arguments: { operation: 'find', collection: 'b' } },
      ],
    });
    server.gemini.fallback = { text: ['should not be asked'] };
    const controller = new AbortController();
    let abortedAt = 0;
    const sink = createRecordingSink(async () => {
      abortedAt = performance.now();
      controller.abort();
      await new Promise((resolve) => setTimeout(resolve, 150));
      return '{"ok":true}';
    });

    const error = await failure(
      adapter().streamTurn(
        turn({ tools: TOOLS, signal: controller.signal }),
        sink,
      ),
    );

    expect(performance.now() - abortedAt).toBeLessThan(100);
    expect(error.kind).toBe('aborted');
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(sink.toolCalls.map((c) => c.id)).toEqual(['call_1']);
    expect(server.gemini.requests).toHaveLength(1);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await failure(
      adapter().streamTurn(
        turn({ signal: controller.signal }),
        createRecordingSink(),
      ),
    );
    expect(error.kind).toBe('aborted');
    expect(server.gemini.requests).toHaveLength(0);
  });

  describe('GOOGLE_GEMINI_BASE_URL', () => {
    const saved = process.env['GOOGLE_GEMINI_BASE_URL'];
    afterEach(() => {
      if (saved === undefined) delete process.env['GOOGLE_GEMINI_BASE_URL'];
      else process.env['GOOGLE_GEMINI_BASE_URL'] = saved;
    });

    it('is used when the connection has no base URL', async () => {
      process.env['GOOGLE_GEMINI_BASE_URL'] = server.geminiBaseUrl;
      server.gemini.enqueue({ text: ['via env'] });
      const envAdapter = new GeminiAdapter({ apiKey: KEY });
      const sink = createRecordingSink();

      await envAdapter.streamTurn(turn(), sink);

      expect(envAdapter.baseUrl).toBe(server.geminiBaseUrl);
      expect(sink.text).toBe('via env');
      expect(server.gemini.requests).toHaveLength(1);
    });

    it('yields to the connection base URL, and defaults to Google', () => {
      process.env['GOOGLE_GEMINI_BASE_URL'] = 'http://127.0.0.1:9';
      expect(
        new GeminiAdapter({ apiKey: KEY, baseUrl: server.geminiBaseUrl })
          .baseUrl,
      ).toBe(server.geminiBaseUrl);
      delete process.env['GOOGLE_GEMINI_BASE_URL'];
      expect(new GeminiAdapter({ apiKey: KEY }).baseUrl).toBe(
        'https://generativelanguage.googleapis.com',
      );
    });
  });
});

/** A local port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) =>
    probe.listen(0, '127.0.0.1', () => resolve()),
  );
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

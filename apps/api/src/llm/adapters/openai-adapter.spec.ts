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
import { OpenAiAdapter } from './openai-adapter';

const KEY = 'sk-test-secret-key-0123456789';

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
  baseUrl: string | undefined = server.openaiBaseUrl,
): OpenAiAdapter {
  return new OpenAiAdapter({ apiKey: KEY, baseUrl }, 'OpenAI');
}

function turn(overrides: Partial<LlmTurnRequest> = {}): LlmTurnRequest {
  return {
    model: 'gpt-test',
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

describe('OpenAiAdapter', () => {
  it('streams a plain reply in order and returns the usage', async () => {
    server.openai.enqueue({
      text: ['Hel', 'lo', ' world'],
      usage: { promptTokens: 7, completionTokens: 3 },
    });
    const sink = createRecordingSink();

    const result = await adapter().streamTurn(turn(), sink);

    expect(sink.deltas).toEqual(['Hel', 'lo', ' world']);
    expect(result).toEqual({
      usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 },
    });
    const [request] = server.openai.requests;
    expect(request.apiKey).toBe(KEY);
    expect(request.body).toMatchObject({
      model: 'gpt-test',
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(request.body.messages).toEqual([
      { role: 'system', content: 'You are Metatron.' },
      { role: 'user', content: 'Hello?' },
    ]);
    expect(request.body.tools).toBeUndefined();
  });

  it('runs one tool call with its id and arguments and sends the JSON result back', async () => {
    server.openai.enqueue(
      {
        text: ['Let me look.'],
        toolCalls: [
          {
            id: 'call_abc',
            name: 'db_query',
            arguments: { operation: 'find', collection: 'contacts' },
          },
        ],
      },
      { text: ['Found', ' 2.'] },
    );
    const sink = createRecordingSink(() => '{"count":2}');

    const result = await adapter().streamTurn(turn({ tools: TOOLS }), sink);

    expect(
      sink.toolCalls.map(({ id, name, arguments: args }) => ({
        id,
        name,
        args,
      })),
    ).toEqual([
      {
        id: 'call_abc',
        name: 'db_query',
        args: { operation: 'find', collection: 'contacts' },
      },
    ]);
    expect(sink.text).toBe('Let me look.Found 2.');
    expect(result.usage).toEqual({
      inputTokens: 20,
      outputTokens: 10,
      totalTokens: 30,
    });
    expect(result.toolRoundsExhausted).toBeUndefined();

    const [first, second] = server.openai.requests;
    expect(first.body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'db_query',
          description: 'Run a database operation',
          parameters: TOOLS[0].parameters,
        },
      },
      {
        type: 'function',
        function: {
          name: 'save_memory',
          description: 'Replace the memory',
          parameters: TOOLS[1].parameters,
        },
      },
    ]);
    expect(first.body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(second.body.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [
          {
            id: 'call_abc',
            type: 'function',
            function: {
              name: 'db_query',
              arguments: '{"operation":"find","collection":"contacts"}',
            },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_abc', content: '{"count":2}' },
    ]);
  });

  it('runs several calls of one reply one at a time, in order', async () => {
    server.openai.enqueue(
      {
        toolCalls: [
          {
            id: 'call_1',
            name: 'db_query',
            arguments: { operation: 'find', collection: 'a' },
          },
          { id: 'call_2', name: 'save_memory', arguments: { content: 'x' } },
          {
            id: 'call_3',
            name: 'db_query',
            arguments: { operation: 'find', collection: 'b' },
          },
        ],
      },
      { text: ['Done.'] },
    );
    const sink = createRecordingSink(async (call) => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return JSON.stringify({ ran: call.id });
    });

    await adapter().streamTurn(turn({ tools: TOOLS }), sink);

    expect(sink.toolCalls.map((c) => c.id)).toEqual([
      'call_1',
      'call_2',
      'call_3',
    ]);
    expect(sink.toolCalls[1].arguments).toEqual({ content: 'x' });
    for (let i = 1; i < sink.toolCalls.length; i++) {
      expect(sink.toolCalls[i].startedAt).toBeGreaterThanOrEqual(
        sink.toolCalls[i - 1].endedAt ?? Infinity,
      );
    }
    const toolMessages = server.openai.requests[1].body.messages.filter(
      (m: { role: string }) => m.role === 'tool',
    );
    expect(toolMessages).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: '{"ran":"call_1"}' },
      { role: 'tool', tool_call_id: 'call_2', content: '{"ran":"call_2"}' },
      { role: 'tool', tool_call_id: 'call_3', content: '{"ran":"call_3"}' },
    ]);
  });

  it('passes a tool error back to the model and goes on', async () => {
    server.openai.enqueue(
      {
        toolCalls: [
          { id: 'call_e', name: 'save_memory', arguments: { content: 'x' } },
        ],
      },
      { text: ['Sorry, that failed.'] },
    );
    const sink = createRecordingSink(() => '{"error":"Memory is full"}');

    await expect(
      adapter().streamTurn(turn({ tools: TOOLS }), sink),
    ).resolves.toBeDefined();

    expect(sink.text).toBe('Sorry, that failed.');
    expect(server.openai.requests[1].body.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_e',
      content: '{"error":"Memory is full"}',
    });
  });

  it('answers invalid JSON arguments with an error for the model, without running the tool', async () => {
    server.openai.enqueue(
      {
        toolCalls: [
          { id: 'call_bad', name: 'db_query', arguments: '{"operation": ' },
        ],
      },
      { text: ['Oops.'] },
    );
    const sink = createRecordingSink();

    await adapter().streamTurn(turn({ tools: TOOLS }), sink);

    expect(sink.toolCalls).toEqual([]);
    expect(server.openai.requests[1].body.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_bad',
      content: '{"error":"The tool arguments are not valid JSON."}',
    });
  });

  it.each([
    [401, 'auth', 'The OpenAI API key was rejected (401).'],
    [403, 'auth', 'The OpenAI API key was rejected (403).'],
    [
      429,
      'rate-limit',
      'OpenAI rate limit reached (429). Try again in a moment.',
    ],
    [500, 'server', 'OpenAI had a server error (500).'],
    [503, 'server', 'OpenAI had a server error (503).'],
  ])('maps HTTP %i to %s without the key', async (status, kind, message) => {
    for (const tools of [null, TOOLS]) {
      server.openai.enqueue({
        status,
        message: `Incorrect API key provided: ${KEY}`,
      });
      const error = await failure(
        adapter().streamTurn(turn({ tools }), createRecordingSink()),
      );
      expect(error).toMatchObject({ kind, message, status });
      expect(error.message).not.toContain(KEY);
    }
    // maxRetries: 0 — one request per turn, no silent retry.
    expect(server.openai.requests).toHaveLength(2);
  });

  it('maps 400 to bad-request with the provider message, the key removed', async () => {
    server.openai.enqueue({
      status: 400,
      message: `  Invalid 'messages[1].content' for key ${KEY}:\n too long.  `,
    });
    const error = await failure(
      adapter().streamTurn(turn(), createRecordingSink()),
    );
    expect(error.kind).toBe('bad-request');
    expect(error.status).toBe(400);
    expect(error.message).toBe(
      "OpenAI rejected the request (400): Invalid 'messages[1].content' for key ••••: too long.",
    );
  });

  it.each([
    ['plain', null],
    ['with tools', TOOLS],
  ])(
    'keeps the partial text and fails with network when the stream is cut (%s)',
    async (_label, tools) => {
      server.openai.enqueue({ text: ['Hel', 'lo', ' never'], cutAfter: 2 });
      const sink = createRecordingSink();

      const error = await failure(adapter().streamTurn(turn({ tools }), sink));

      expect(error.kind).toBe('network');
      expect(error.message).toBe('The connection to OpenAI was cut mid-reply.');
      expect(sink.deltas).toEqual(['Hel', 'lo']);
    },
  );

  it('fails with network when nothing listens at the base URL', async () => {
    const port = await closedPort();
    const error = await failure(
      adapter(`http://127.0.0.1:${port}/v1`).streamTurn(
        turn(),
        createRecordingSink(),
      ),
    );
    expect(error.kind).toBe('network');
    expect(error.message).toBe(
      `Could not reach OpenAI at 127.0.0.1:${port}: connection refused (ECONNREFUSED).`,
    );
  });

  it('names an OpenAI-compatible endpoint in its errors', async () => {
    server.openai.enqueue({ status: 401, message: 'no' });
    const error = await failure(
      new OpenAiAdapter(
        { apiKey: '', baseUrl: server.openaiBaseUrl },
        'ollama',
      ).streamTurn(turn(), createRecordingSink()),
    );
    expect(error.message).toBe('The ollama API key was rejected (401).');
    // An empty key is sent as a placeholder (the SDK refuses none).
    expect(server.openai.requests[0].apiKey).toBe('no-key');
  });

  it('stops at the tool round cap: exactly maxToolRounds rounds of tools, then toolRoundsExhausted', async () => {
    server.openai.fallback = {
      toolCalls: [{ name: 'save_memory', arguments: { content: 'again' } }],
    };
    const sink = createRecordingSink();

    const result = await adapter().streamTurn(
      turn({ tools: TOOLS, maxToolRounds: 3 }),
      sink,
    );

    expect(result.toolRoundsExhausted).toBe(true);
    expect(sink.toolCalls).toHaveLength(3);
    expect(server.openai.requests).toHaveLength(4);
    expect(new Set(sink.toolCalls.map((c) => c.id)).size).toBe(3);
  });

  it('sends no tools when the tool list is empty', async () => {
    server.openai.enqueue({ text: ['Hi'] });
    await adapter().streamTurn(turn({ tools: [] }), createRecordingSink());
    expect(server.openai.requests[0].body.tools).toBeUndefined();
    expect(server.openai.requests[0].body.tool_choice).toBeUndefined();
  });

  it('maps earlier tool turns into assistant/tool messages and sends no system message for a null prompt', async () => {
    server.openai.enqueue({ text: ['ok'] });
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
          { role: 'user', text: 'Thanks' },
          { role: 'assistant', parts: [{ type: 'text', text: 'Welcome' }] },
        ],
        userMessage: 'Again?',
      }),
      createRecordingSink(),
    );

    expect(server.openai.requests[0].body.messages).toEqual([
      { role: 'user', content: 'Who are my contacts?' },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: {
              name: 'db_query',
              arguments: '{"operation":"find","collection":"contacts"}',
            },
          },
          {
            id: 'call_2',
            type: 'function',
            function: { name: 'save_memory', arguments: '{"content":"x"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '[{"name":"Ann"}]' },
      {
        role: 'tool',
        tool_call_id: 'call_2',
        content: '{"error":"timed out"}',
      },
      { role: 'assistant', content: 'You know Ann.' },
      { role: 'user', content: 'Thanks' },
      { role: 'assistant', content: 'Welcome' },
      { role: 'user', content: 'Again?' },
    ]);
  });

  it('stops promptly when aborted mid-stream', async () => {
    server.openai.enqueue({ text: ['a', 'b', 'c', 'd'], chunkDelayMs: 400 });
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
    server.openai.enqueue({
      toolCalls: [
        {
          id: 'call_1',
          name: 'db_query',
          arguments: { operation: 'find', collection: 'a' },
        },
        {
          id: 'call_2',
          name: 'db_query',
          arguments: { operation: 'find', collection: 'b' },
        },
      ],
    });
    server.openai.fallback = { text: ['should not be asked'] };
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
    expect(server.openai.requests).toHaveLength(1);
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
    expect(server.openai.requests).toHaveLength(0);
  });

  describe('OPENAI_BASE_URL', () => {
    const saved = process.env['OPENAI_BASE_URL'];
    afterEach(() => {
      if (saved === undefined) delete process.env['OPENAI_BASE_URL'];
      else process.env['OPENAI_BASE_URL'] = saved;
    });

    it('is used when the connection has no base URL', async () => {
      process.env['OPENAI_BASE_URL'] = server.openaiBaseUrl;
      server.openai.enqueue({ text: ['via env'] });
      const envAdapter = new OpenAiAdapter({ apiKey: KEY });
      const sink = createRecordingSink();

      await envAdapter.streamTurn(turn(), sink);

      expect(envAdapter.baseUrl).toBe(server.openaiBaseUrl);
      expect(sink.text).toBe('via env');
      expect(server.openai.requests).toHaveLength(1);
    });

    it('yields to the connection base URL', () => {
      process.env['OPENAI_BASE_URL'] = 'http://127.0.0.1:9/v1';
      expect(
        new OpenAiAdapter({ apiKey: KEY, baseUrl: server.openaiBaseUrl })
          .baseUrl,
      ).toBe(server.openaiBaseUrl);
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

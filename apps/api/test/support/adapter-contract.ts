/**
 * The behaviour every `LlmAdapter` must have, as Jest tests run against the fake provider server
 * (tools/fake-llm) through the real SDK. Not a spec itself: each adapter's spec calls
 * `testAdapterContract(setup)` inside its own `describe`, with `setup` saying what differs per
 * provider (the fake it talks to, how its calls carry ids, the wire format of its requests).
 */
import { createServer, type AddressInfo } from 'node:net';
import {
  startFakeLlmServer,
  type FakeLlmServer,
  type FakeProvider,
  type FakeRecordedRequest,
  type FakeToolCall,
} from '../../../../tools/fake-llm/fake-llm-server';
import { createRecordingSink } from '../../../../tools/fake-llm/recording-sink';
import {
  LlmProviderError,
  type LlmAdapter,
  type LlmHistoryMessage,
  type LlmToolSpec,
  type LlmTurnRequest,
} from '../../src/llm/llm-adapter';

/** The tools offered in the tool tests. */
/** A tool with one string argument, described by `description` (for the request-body specs). */
export const toolSpec = (name: string, description: string): LlmToolSpec => ({
  name,
  description,
  parameters: {
    type: 'object',
    properties: { query: { type: 'string', description } },
    required: ['query'],
  },
});

export const TOOLS: LlmToolSpec[] = [
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

/**
 * An earlier exchange with tool calls, for the history-mapping tests: a question, then a reply of
 * text, a call that returned an array (call_1), a call that failed (call_2) and more text.
 */
export const HISTORY_WITH_TOOL_CALLS: LlmHistoryMessage[] = [
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
];

/**
 * Starts the fake provider server for the spec file, resets it before each test and closes it
 * at the end. Read it through `.server` inside hooks and tests.
 */
export function useFakeLlmServer(): { readonly server: FakeLlmServer } {
  let started: FakeLlmServer | undefined;
  beforeAll(async () => {
    started = await startFakeLlmServer();
  });
  afterAll(async () => {
    await started?.close();
  });
  beforeEach(() => started?.reset());
  return {
    get server(): FakeLlmServer {
      if (!started) throw new Error('the fake LLM server is not started yet');
      return started;
    },
  };
}

/**
 * Builds turn requests for `model` with everyday defaults (a system prompt, no history, no tools,
 * 5 tool rounds), each field overridable.
 */
export function turnBuilder(
  model: string,
): (overrides?: Partial<LlmTurnRequest>) => LlmTurnRequest {
  return (overrides = {}) => ({
    model,
    systemPrompt: 'You are Metatron.',
    history: [],
    userMessage: 'Hello?',
    tools: null,
    maxToolRounds: 5,
    signal: new AbortController().signal,
    ...overrides,
  });
}

/** The LlmProviderError a turn fails with (fails the test when it does not fail). */
export async function failure(
  promise: Promise<unknown>,
): Promise<LlmProviderError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(LlmProviderError);
    return error as LlmProviderError;
  }
  throw new Error('expected the turn to fail');
}

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

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** An adapter that tells which base URL its requests go to. */
export type InspectableAdapter = LlmAdapter & { readonly baseUrl: string };

/** What differs between providers, for `testAdapterContract`. */
export interface AdapterContractSetup {
  /** The provider as the adapter's error messages name it ("OpenAI", "Gemini"). */
  label: string;
  /** The key the adapters are built with: it must reach the provider and never an error message. */
  apiKey: string;
  /** The model the turns ask for. */
  model: string;
  /** The fake provider the adapter talks to: its queue and the requests it received. */
  provider(): FakeProvider;
  /** The fake server's base URL in the form this SDK expects. */
  fakeBaseUrl(): string;
  /** The base URL this SDK expects for a server at 127.0.0.1:`port`. */
  baseUrlAt(port: number): string;
  /** An adapter built with `apiKey` and, in its connection, `baseUrl` (none when undefined). */
  adapter(baseUrl: string | undefined): InspectableAdapter;
  /** The environment variable the SDK falls back to for the base URL. */
  baseUrlVariable: string;
  /** The provider's own API, used when neither the connection nor the variable gives a base URL. */
  defaultBaseUrl: string;
  /**
   * Whether the provider's tool calls always carry an id (OpenAI). When they do not (Gemini), the
   * adapter numbers them call_1, call_2… across the turn. The tests script calls either way so
   * that the sink sees call_1, call_2….
   */
  callsCarryIds: boolean;
  /** A 400 whose message (holding the key) the adapter passes on, and the message expected. */
  badRequest: { providerMessage: string; expectedMessage: string };
  /** Checks of what the adapter sent, in the provider's wire format. */
  wire: AdapterWireChecks;
}

/** Provider-specific checks of recorded requests (each throws through `expect`). */
export interface AdapterWireChecks {
  /** The request of a plain turn: the system prompt 'You are Metatron.', the user message 'Hello?', streaming. */
  plainTurn(request: FakeRecordedRequest): void;
  /** A request of a turn whose tools are null or empty: no tools and no tool settings. */
  noTools(request: FakeRecordedRequest): void;
  /** The first request of a turn with `TOOLS`: both offered, in order. */
  toolsOffered(request: FakeRecordedRequest): void;
  /**
   * The request after one round: the model's text 'Let me look.' and its call
   * (call_1, db_query `{ operation: 'find', collection: 'contacts' }`), then the result `[{"name":"Ann"}]`.
   */
  oneRoundSentBack(request: FakeRecordedRequest): void;
  /** The request after a round of three calls: the results `{"ran":"call_1"}`… `{"ran":"call_3"}`, in order. */
  resultsSentBack(request: FakeRecordedRequest): void;
  /** The request after the call call_1 (save_memory) failed: its result `{"error":"Memory is full"}`. */
  toolErrorSentBack(request: FakeRecordedRequest): void;
}

/**
 * Registers the tests every adapter must pass, in the calling `describe` block (no describe of
 * their own, so the spec's describe names the adapter). The spec must `useFakeLlmServer()`.
 */
export function testAdapterContract(setup: AdapterContractSetup): void {
  const { label, apiKey, wire } = setup;
  const provider = (): FakeProvider => setup.provider();
  const adapter = (baseUrl = setup.fakeBaseUrl()): InspectableAdapter =>
    setup.adapter(baseUrl);
  const turn = turnBuilder(setup.model);
  /** A scripted model call that the sink will see as `id`. */
  const call = (
    id: string,
    name: string,
    args: Record<string, unknown>,
  ): FakeToolCall =>
    setup.callsCarryIds
      ? { id, name, arguments: args }
      : { name, arguments: args };

  it('streams a plain reply in order and returns the usage, without tools', async () => {
    provider().enqueue({
      text: ['Hel', 'lo', ' world'],
      usage: { promptTokens: 7, completionTokens: 3 },
    });
    const sink = createRecordingSink();

    const result = await adapter().streamTurn(turn(), sink);

    expect(sink.deltas).toEqual(['Hel', 'lo', ' world']);
    expect(result).toEqual({
      usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 },
    });
    expect(provider().requests).toHaveLength(1);
    const [request] = provider().requests;
    expect(request.apiKey).toBe(apiKey);
    expect(request.model).toBe(setup.model);
    wire.plainTurn(request);
    wire.noTools(request);
  });

  it('runs one tool call with its id and arguments and sends the JSON result back', async () => {
    provider().enqueue(
      {
        text: ['Let me look.'],
        toolCalls: [
          call('call_1', 'db_query', {
            operation: 'find',
            collection: 'contacts',
          }),
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
    expect(result.usage).toEqual({
      inputTokens: 20,
      outputTokens: 10,
      totalTokens: 30,
    });
    expect(result.toolRoundsExhausted).toBeUndefined();
    const [first, second] = provider().requests;
    wire.toolsOffered(first);
    wire.oneRoundSentBack(second);
  });

  it('runs several calls of one reply one at a time, in order, and sends every result back', async () => {
    provider().enqueue(
      {
        toolCalls: [
          call('call_1', 'db_query', { operation: 'find', collection: 'a' }),
          call('call_2', 'save_memory', { content: 'x' }),
          call('call_3', 'db_query', { operation: 'find', collection: 'b' }),
        ],
      },
      { text: ['Done.'] },
    );
    const sink = createRecordingSink(async ({ id }) => {
      await delay(30);
      return JSON.stringify({ ran: id });
    });

    await adapter().streamTurn(turn({ tools: TOOLS }), sink);

    expect(sink.toolCalls.map((c) => [c.id, c.name, c.arguments])).toEqual([
      ['call_1', 'db_query', { operation: 'find', collection: 'a' }],
      ['call_2', 'save_memory', { content: 'x' }],
      ['call_3', 'db_query', { operation: 'find', collection: 'b' }],
    ]);
    for (let i = 1; i < sink.toolCalls.length; i++) {
      expect(sink.toolCalls[i].startedAt).toBeGreaterThanOrEqual(
        sink.toolCalls[i - 1].endedAt ?? Infinity,
      );
    }
    wire.resultsSentBack(provider().requests[1]);
  });

  it('passes a tool error back to the model and goes on', async () => {
    provider().enqueue(
      { toolCalls: [call('call_1', 'save_memory', { content: 'x' })] },
      { text: ['Sorry, that failed.'] },
    );
    const sink = createRecordingSink(() => '{"error":"Memory is full"}');

    await expect(
      adapter().streamTurn(turn({ tools: TOOLS }), sink),
    ).resolves.toBeDefined();

    expect(sink.text).toBe('Sorry, that failed.');
    wire.toolErrorSentBack(provider().requests[1]);
  });

  it.each([
    [401, 'auth', `The ${label} API key was rejected (401).`],
    [403, 'auth', `The ${label} API key was rejected (403).`],
    [
      429,
      'rate-limit',
      `${label} rate limit reached (429). Try again in a moment.`,
    ],
    [500, 'server', `${label} had a server error (500).`],
    [503, 'server', `${label} had a server error (503).`],
  ])('maps HTTP %i to %s without the key', async (status, kind, message) => {
    // Every attempt gets the same answer (a 429 or 5xx is tried three times).
    provider().fallback = {
      status,
      message: `Incorrect API key provided: ${apiKey}`,
    };
    for (const tools of [null, TOOLS]) {
      const error = await failure(
        adapter().streamTurn(turn({ tools }), createRecordingSink()),
      );
      expect(error).toMatchObject({ kind, message, status });
      expect(error.message).not.toContain(apiKey);
    }
    // The SDK retries nothing itself and continues nothing: only the adapter's two retries of a transient status.
    expect(provider().requests).toHaveLength(kind === 'auth' ? 2 : 6);
  });

  it('maps a 400 to bad-request with the provider message, the key removed', async () => {
    provider().enqueue({
      status: 400,
      message: setup.badRequest.providerMessage,
    });
    const error = await failure(
      adapter().streamTurn(turn(), createRecordingSink()),
    );
    expect(error).toMatchObject({
      kind: 'bad-request',
      status: 400,
      message: setup.badRequest.expectedMessage,
    });
    expect(error.message).not.toContain(apiKey);
  });

  it.each([
    ['plain', null],
    ['with tools', TOOLS],
  ])(
    'keeps the partial text and fails with network when the stream is cut (%s)',
    async (_label, tools) => {
      provider().enqueue({ text: ['Hel', 'lo', ' never'], cutAfter: 2 });
      const sink = createRecordingSink();

      const error = await failure(adapter().streamTurn(turn({ tools }), sink));

      expect(error.kind).toBe('network');
      expect(error.message).toBe(
        `The connection to ${label} was cut mid-reply.`,
      );
      expect(sink.deltas).toEqual(['Hel', 'lo']);
      expect(provider().requests).toHaveLength(1);
    },
  );

  describe('a transient failure before any output', () => {
    /** A sink that counts the model calls the budget would reserve (`beforeCall`). */
    const countingSink = (
      answer?: Parameters<typeof createRecordingSink>[0],
    ) => {
      const sink: ReturnType<typeof createRecordingSink> & {
        calls: number;
        beforeCall(): Promise<void>;
      } = Object.assign(createRecordingSink(answer), {
        calls: 0,
        beforeCall: async () => {
          sink.calls += 1;
        },
      });
      return sink;
    };

    it('sends the call again when the connection is reset before a response: one reply, no error', async () => {
      provider().enqueue({ reset: true }, { text: ['Hel', 'lo'] });
      const sink = countingSink();

      const result = await adapter().streamTurn(turn(), sink);

      expect(sink.deltas).toEqual(['Hel', 'lo']);
      expect(result.usage).toBeDefined();
      expect(provider().requests).toHaveLength(2);
      // Each attempt is its own call for the budget.
      expect(sink.calls).toBe(2);
    });

    it.each([[429], [500], [503], [408], [409]])(
      'retries a %s with no output, at most twice',
      async (status) => {
        provider().enqueue(
          { status, message: 'busy' },
          { status, message: 'busy' },
          { text: ['Fine.'] },
        );
        const sink = countingSink();
        await adapter().streamTurn(turn(), sink);
        expect(sink.text).toBe('Fine.');
        expect(provider().requests).toHaveLength(3);
        expect(sink.calls).toBe(3);
      },
    );

    it('gives up after two retries with the last error', async () => {
      provider().fallback = { status: 503, message: 'overloaded' };
      const sink = countingSink();
      const error = await failure(adapter().streamTurn(turn(), sink));
      expect(error).toMatchObject({ kind: 'server', status: 503 });
      expect(provider().requests).toHaveLength(3);
    });

    it.each([[400], [401], [403], [404], [422]])(
      'never retries a %s',
      async (status) => {
        provider().enqueue({ status, message: 'no' }, { text: ['never'] });
        const sink = countingSink();
        await failure(adapter().streamTurn(turn(), sink));
        expect(provider().requests).toHaveLength(1);
        expect(sink.calls).toBe(1);
        expect(sink.deltas).toEqual([]);
      },
    );

    it('waits the Retry-After it is given, and fails at once when it asks for longer than 5 s', async () => {
      provider().enqueue(
        { status: 429, message: 'slow down', retryAfter: '1' },
        { text: ['Fine.'] },
      );
      const started = Date.now();
      await adapter().streamTurn(turn(), createRecordingSink());
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(provider().requests).toHaveLength(2);

      provider().reset();
      provider().enqueue(
        { status: 429, message: 'slow down', retryAfter: '60' },
        { text: ['never'] },
      );
      const error = await failure(
        adapter().streamTurn(turn(), createRecordingSink()),
      );
      expect(error.kind).toBe('rate-limit');
      expect(provider().requests).toHaveLength(1);
    });

    it('retries a later call of a tool turn without running its tools again', async () => {
      provider().enqueue(
        {
          text: ['Let me look.'],
          toolCalls: [
            call('call_1', 'db_query', {
              operation: 'find',
              collection: 'contacts',
            }),
          ],
        },
        { reset: true },
        { text: ['Found Ann.'] },
      );
      const sink = countingSink(() => '[{"name":"Ann"}]');

      await adapter().streamTurn(turn({ tools: TOOLS }), sink);

      expect(sink.toolCalls).toHaveLength(1);
      expect(sink.text).toBe('Let me look.Found Ann.');
      expect(provider().requests).toHaveLength(3);
      wire.oneRoundSentBack(provider().requests[2]);
    });

    it('never retries once a tool call streamed (the cut call fails, its tool does not run)', async () => {
      provider().enqueue(
        {
          toolCalls: [
            call('call_1', 'db_query', {
              operation: 'find',
              collection: 'contacts',
            }),
          ],
          cutAfter: 1,
        },
        { text: ['never'] },
      );
      const sink = countingSink();
      const error = await failure(
        adapter().streamTurn(turn({ tools: TOOLS }), sink),
      );
      expect(error.kind).toBe('network');
      expect(sink.toolCalls).toHaveLength(0);
      expect(provider().requests).toHaveLength(1);
    });

    it('stops waiting to retry when the turn is aborted', async () => {
      provider().fallback = { status: 503, message: 'overloaded' };
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const started = Date.now();
      const error = await failure(
        adapter().streamTurn(
          turn({ signal: controller.signal }),
          createRecordingSink(),
        ),
      );
      expect(error.kind).toBe('aborted');
      expect(Date.now() - started).toBeLessThan(1_000);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(provider().requests).toHaveLength(1);
    });
  });

  it('fails with network when nothing listens at the base URL', async () => {
    const port = await closedPort();
    const error = await failure(
      adapter(setup.baseUrlAt(port)).streamTurn(turn(), createRecordingSink()),
    );
    expect(error.kind).toBe('network');
    expect(error.message).toBe(
      `Could not reach ${label} at 127.0.0.1:${port}: connection refused (ECONNREFUSED).`,
    );
  });

  it('stops at the tool round cap: exactly maxToolRounds rounds of tools, then toolRoundsExhausted', async () => {
    // The same id-less call every time (the fake gives OpenAI calls random ids).
    provider().fallback = {
      toolCalls: [{ name: 'save_memory', arguments: { content: 'again' } }],
    };
    const sink = createRecordingSink();

    const result = await adapter().streamTurn(
      turn({ tools: TOOLS, maxToolRounds: 3 }),
      sink,
    );

    expect(result.toolRoundsExhausted).toBe(true);
    expect(sink.toolCalls).toHaveLength(3);
    expect(provider().requests).toHaveLength(4);
    const ids = sink.toolCalls.map((c) => c.id);
    expect(new Set(ids).size).toBe(3);
    if (!setup.callsCarryIds) {
      // Numbered across the turn, not per round.
      expect(ids).toEqual(['call_1', 'call_2', 'call_3']);
    }
    expect(result.usage).toEqual({
      inputTokens: 40,
      outputTokens: 20,
      totalTokens: 60,
    });
  });

  it('sends no tools when the tool list is empty', async () => {
    provider().enqueue({ text: ['Hi'] });
    await adapter().streamTurn(turn({ tools: [] }), createRecordingSink());
    wire.noTools(provider().requests[0]);
  });

  it('stops promptly when aborted mid-stream', async () => {
    // The next chunk far away (the fake stops waiting when the client goes): only the abort can end
    // the turn within half of it, however late a busy machine runs the callbacks.
    const chunkDelayMs = 10_000;
    provider().enqueue({ text: ['a', 'b', 'c', 'd'], chunkDelayMs });
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

    expect(performance.now() - abortedAt).toBeLessThan(chunkDelayMs / 2);
    expect(error.kind).toBe('aborted');
    expect(sink.deltas).toEqual(['a']);
  });

  it('stops promptly when aborted during a tool call and runs no further tool', async () => {
    provider().enqueue({
      toolCalls: [
        call('call_1', 'db_query', { operation: 'find', collection: 'a' }),
        call('call_2', 'db_query', { operation: 'find', collection: 'b' }),
      ],
    });
    provider().fallback = { text: ['should not be asked'] };
    const controller = new AbortController();
    // The tool is held until the turn has failed: a turn that waited for its tool would never fail
    // (and time out), whatever the machine's load, instead of racing a fixed delay.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let toolReturned!: () => void;
    const returned = new Promise<void>((resolve) => (toolReturned = resolve));
    const sink = createRecordingSink(async () => {
      controller.abort();
      await held;
      toolReturned();
      return '{"ok":true}';
    });

    let timer: NodeJS.Timeout | undefined;
    const error = await Promise.race([
      failure(
        adapter().streamTurn(
          turn({ tools: TOOLS, signal: controller.signal }),
          sink,
        ),
      ),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error('the aborted turn waited for its tool')),
          10_000,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    expect(error.kind).toBe('aborted');
    // The tool ends after the abort: the loop must stop there, not run call_2.
    release();
    await returned;
    await delay(50);
    expect(sink.toolCalls.map((c) => c.id)).toEqual(['call_1']);
    expect(provider().requests).toHaveLength(1);
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
    expect(provider().requests).toHaveLength(0);
  });

  describe(setup.baseUrlVariable, () => {
    const variable = setup.baseUrlVariable;
    const saved = process.env[variable];
    afterEach(() => {
      if (saved === undefined) delete process.env[variable];
      else process.env[variable] = saved;
    });

    it('is used when the connection has no base URL', async () => {
      process.env[variable] = setup.fakeBaseUrl();
      provider().enqueue({ text: ['via env'] });
      const envAdapter = setup.adapter(undefined);
      const sink = createRecordingSink();

      await envAdapter.streamTurn(turn(), sink);

      expect(envAdapter.baseUrl).toBe(setup.fakeBaseUrl());
      expect(sink.text).toBe('via env');
      expect(provider().requests).toHaveLength(1);
    });

    it("yields to the connection base URL, and defaults to the provider's own", () => {
      process.env[variable] = setup.baseUrlAt(9);
      expect(adapter().baseUrl).toBe(setup.fakeBaseUrl());
      delete process.env[variable];
      expect(setup.adapter(undefined).baseUrl).toBe(setup.defaultBaseUrl);
    });
  });
}

import { createRecordingSink } from '../../../../../tools/fake-llm/recording-sink';
import {
  failure,
  HISTORY_WITH_TOOL_CALLS,
  testAdapterContract,
  TOOLS,
  turnBuilder,
  useFakeLlmServer,
} from '../../../test/support/adapter-contract';
import { createServer, type Server } from 'node:http';
import { GeminiAdapter } from './gemini-adapter';

const KEY = 'AIzaSyTestSecretKey0123456789';
const MODEL = 'gemini-2.5-flash';

const fake = useFakeLlmServer();

function adapter(baseUrl: string | undefined): GeminiAdapter {
  return new GeminiAdapter({ apiKey: KEY, baseUrl });
}

const turn = turnBuilder(MODEL);

/** The contents Gemini received in request `i`. */
function contents(i: number): unknown[] {
  return fake.server.gemini.requests[i].body.contents;
}

describe('GeminiAdapter', () => {
  testAdapterContract({
    label: 'Gemini',
    apiKey: KEY,
    model: MODEL,
    provider: () => fake.server.gemini,
    fakeBaseUrl: () => fake.server.geminiBaseUrl,
    baseUrlAt: (port) => `http://127.0.0.1:${port}`,
    adapter,
    baseUrlVariable: 'GOOGLE_GEMINI_BASE_URL',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    callsCarryIds: false,
    badRequest: {
      providerMessage: `* GenerateContentRequest.contents: contents is not specified (key=${KEY})`,
      expectedMessage:
        'Gemini rejected the request (400): * GenerateContentRequest.contents: contents is not specified (key=••••)',
    },
    wire: {
      plainTurn(request) {
        expect(request.path).toBe(
          '/v1beta/models/gemini-2.5-flash:streamGenerateContent',
        );
        expect(request.query).toEqual({ alt: 'sse' });
        expect(request.body.systemInstruction).toEqual({
          role: 'user',
          parts: [{ text: 'You are Metatron.' }],
        });
        expect(request.body.contents).toEqual([
          { role: 'user', parts: [{ text: 'Hello?' }] },
        ]);
      },
      noTools(request) {
        expect(request.body.tools).toBeUndefined();
        expect(request.body.toolConfig).toBeUndefined();
      },
      toolsOffered(request) {
        expect(request.body.tools).toEqual([
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
        expect(request.body.toolConfig).toEqual({
          functionCallingConfig: { mode: 'AUTO' },
        });
      },
      oneRoundSentBack(request) {
        // The model's id-less call is answered without an id, and the array result wrapped as { data }.
        expect(request.body.contents.slice(1)).toEqual([
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
      },
      resultsSentBack(request) {
        // All the results of one reply answer it together, in one user turn.
        expect(request.body.contents.at(-1)).toEqual({
          role: 'user',
          parts: [
            ['db_query', 'call_1'],
            ['save_memory', 'call_2'],
            ['db_query', 'call_3'],
          ].map(([name, ran]) => ({
            functionResponse: { name, response: { ran } },
          })),
        });
      },
      toolErrorSentBack(request) {
        expect(request.body.contents.at(-1)).toEqual({
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
      },
    },
  });

  it("uses the call's own id when Gemini gives one and echoes it in the response", async () => {
    fake.server.gemini.enqueue(
      {
        toolCalls: [
          { id: 'fc-42', name: 'save_memory', arguments: { content: 'x' } },
        ],
      },
      { text: ['Saved.'] },
    );
    const sink = createRecordingSink(() => 'plain words');

    await adapter(fake.server.geminiBaseUrl).streamTurn(
      turn({ tools: TOOLS }),
      sink,
    );

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

  it("maps Gemini's 400 for an invalid key to auth", async () => {
    fake.server.gemini.enqueue({
      status: 400,
      message: 'API key not valid. Please pass a valid API key.',
    });
    const error = await failure(
      adapter(fake.server.geminiBaseUrl).streamTurn(
        turn(),
        createRecordingSink(),
      ),
    );
    expect(error).toMatchObject({
      kind: 'auth',
      status: 400,
      message: 'The Gemini API key was rejected (400).',
    });
  });

  it('sends the call again when the stream is cut before any chunk (nothing reached anyone yet)', async () => {
    fake.server.gemini.enqueue(
      { text: ['never'], cutAfter: 0 },
      { text: ['Fine.'] },
    );
    const sink = createRecordingSink();
    await adapter(fake.server.geminiBaseUrl).streamTurn(turn(), sink);
    expect(sink.deltas).toEqual(['Fine.']);
    expect(fake.server.gemini.requests).toHaveLength(2);
  });

  it('fails with network when every attempt is cut before any chunk', async () => {
    fake.server.gemini.fallback = { text: ['never'], cutAfter: 0 };
    const error = await failure(
      adapter(fake.server.geminiBaseUrl).streamTurn(
        turn(),
        createRecordingSink(),
      ),
    );
    expect(error.kind).toBe('network');
    expect(fake.server.gemini.requests).toHaveLength(3);
  });

  it('maps earlier tool turns into functionCall / functionResponse contents and sends no system instruction for a null prompt', async () => {
    fake.server.gemini.enqueue({ text: ['ok'] });
    await adapter(fake.server.geminiBaseUrl).streamTurn(
      turn({
        systemPrompt: null,
        history: [
          ...HISTORY_WITH_TOOL_CALLS,
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

    const body = fake.server.gemini.requests[0].body;
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
});

describe('GeminiAdapter, a reply piece that is not JSON', () => {
  let server: Server;
  let baseUrl: string;
  let closed: Promise<void>;

  beforeAll(async () => {
    server = createServer((req, res) => {
      closed = new Promise((done) => res.once('close', () => done()));
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] } }] })}\n\n`,
      );
      // A broken piece, then the connection is kept open: only the reader's cancel ends it.
      setTimeout(() => res.write('data: {"candidates": [\n\n'), 20);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as { port: number };
    baseUrl = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  });

  it('fails the turn with a readable error, keeps the text before it, and closes the response', async () => {
    const sink = createRecordingSink();
    const error = await failure(
      new GeminiAdapter({ apiKey: KEY, baseUrl }).streamTurn(turn(), sink),
    );
    expect(error.kind).toBe('unknown');
    expect(error.message).toMatch(/^Gemini failed: /);
    expect(error.message).not.toContain(KEY);
    expect(sink.text).toBe('Hel');
    // The body was cancelled: the server sees its response closed without waiting for an end.
    await closed;
  });
});

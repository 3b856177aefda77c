import {
  type Content,
  FunctionCallingConfigMode,
  type GenerateContentConfig,
  GoogleGenAI,
  type Part,
} from '@google/genai';
import { toolSpec } from '../../../test/support/adapter-contract';
import {
  GeminiConversation,
  geminiModelPath,
  geminiRequestBody,
  type GeminiRequestConfig,
} from './gemini-request';
import { GeminiClient } from './gemini-stream';

const MODEL = 'gemini-2.5-flash';

/** What a client sent, and the replies (SSE pieces) it gets, one list per request. */
interface Wire {
  sent: { url: string; headers: Record<string, string>; body: string }[];
  replies: unknown[][];
}

/** A `fetch` that records each request and answers with the next reply's pieces as `?alt=sse` events. */
function wireFetch(wire: Wire): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach(
      (value, name) => (headers[name] = value),
    );
    wire.sent.push({ url: String(input), headers, body: String(init?.body) });
    const pieces = wire.replies.shift() ?? [];
    const sse = pieces.map((piece) => `data: ${JSON.stringify(piece)}\n\n`);
    return new Response(sse.join(''), {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
    });
  }) as typeof fetch;
}

function clientOptions(wire: Wire) {
  return {
    apiKey: 'AIzaSyTestSecretKey0123456789',
    vertexai: false,
    httpOptions: { baseUrl: 'http://127.0.0.1:9', fetch: wireFetch(wire) },
  };
}

/** The SDK's client, as the adapter used it before stop 42. */
function sdk(): { ai: GoogleGenAI; wire: Wire } {
  const wire: Wire = { sent: [], replies: [] };
  return { ai: new GoogleGenAI(clientOptions(wire)), wire };
}

/** The config the adapter gave the SDK for the same request (its `configFor` before stop 42). */
function sdkConfig(config: GeminiRequestConfig): GenerateContentConfig {
  return {
    automaticContinuation: false,
    ...(config.maxOutputTokens
      ? { maxOutputTokens: config.maxOutputTokens }
      : {}),
    ...(config.systemPrompt ? { systemInstruction: config.systemPrompt } : {}),
    ...(config.tools?.length
      ? {
          tools: [
            {
              functionDeclarations: config.tools.map((tool) => ({
                name: tool.name,
                description: tool.description,
                parametersJsonSchema: tool.parameters,
              })),
            },
          ],
          toolConfig: {
            functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO },
          },
        }
      : {}),
  };
}

/** Reads a stream to its end. */
async function drain(stream: AsyncGenerator<unknown>): Promise<void> {
  for await (const piece of stream) void piece;
}

/** The body the SDK sends for these contents and this config. */
async function sdkBody(
  contents: Content[],
  config: GeminiRequestConfig,
): Promise<string> {
  const { ai, wire } = sdk();
  await drain(
    await ai.models.generateContentStream({
      model: MODEL,
      contents: structuredClone(contents),
      config: sdkConfig(config),
    }),
  );
  return wire.sent[0].body;
}

const tool = toolSpec;

const user = (...parts: Part[]): Content => ({ role: 'user', parts });
const model = (...parts: Part[]): Content => ({ role: 'model', parts });

/** A history with every kind of part a conversation holds, and some the SDK drops. */
const RICH_HISTORY: Content[] = [
  user({ text: 'Grüße — “quoted” 👋 日本語' }),
  model(
    { text: 'thinking…', thought: true, thoughtSignature: 'c2lnbmF0dXJl' },
    {
      functionCall: { id: 'call-1', name: 'db_query', args: { limit: 5 } },
      thoughtSignature: 'b3RoZXI=',
    },
    { functionCall: { name: 'no_args' } },
  ),
  user(
    {
      functionResponse: {
        id: 'call-1',
        name: 'db_query',
        response: { output: [{ name: 'Ada' }] },
      },
    },
    { functionResponse: { name: 'no_args', response: { error: 'nope' } } },
  ),
  model(
    { text: '' },
    { text: 'Done.', unknownField: 1 } as Part,
    {
      text: null,
      inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' },
    } as unknown as Part,
  ),
  user(
    { text: 'And this file?' },
    { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
    { fileData: { mimeType: 'image/png', fileUri: 'https://x/y' } },
  ),
];

describe('the Gemini request (geminiRequestBody)', () => {
  it.each<[string, Content[], GeminiRequestConfig]>([
    [
      'a first message with a system prompt',
      [user({ text: 'Say hello' })],
      { systemPrompt: 'You are Metatron.', tools: null },
    ],
    [
      'no system prompt, a token limit',
      [user({ text: 'Say hello' })],
      { systemPrompt: null, tools: [], maxOutputTokens: 256 },
    ],
    [
      'tools',
      [user({ text: 'Look up my contacts' })],
      {
        systemPrompt: 'Prompt « mémoire » €',
        tools: [tool('db_query', 'Reads'), tool('notes', 'Recherche — 日本語')],
        maxOutputTokens: 1024,
      },
    ],
    [
      'a long history: calls, responses, thoughts, files, empty and unknown fields',
      RICH_HISTORY,
      { systemPrompt: 'You are Metatron.', tools: [tool('db_query', 'Reads')] },
    ],
  ])('%s: the bytes the SDK sends', async (_label, contents, config) => {
    expect(geminiRequestBody(contents, config)).toBe(
      await sdkBody(contents, config),
    );
  });

  it('a tool declaration is made once per spec, and still follows the spec it is given', () => {
    const spec = tool('db_query', 'Reads');
    const config = { systemPrompt: null, tools: [spec] };
    const first = geminiRequestBody([user({ text: 'a' })], config);
    expect(geminiRequestBody([user({ text: 'a' })], config)).toBe(first);
    const other = geminiRequestBody([user({ text: 'a' })], {
      systemPrompt: null,
      tools: [tool('db_query', 'Writes')],
    });
    expect(other).toContain('"description":"Writes"');
  });

  it('refuses what the SDK refuses in the Developer API', async () => {
    for (const part of [
      { functionCall: { name: 'x', partialArgs: [] } },
      { functionCall: { name: 'x', willContinue: true } },
    ] as Part[]) {
      const contents = [model(part), user({ text: 'next' })];
      const config = { systemPrompt: null, tools: null };
      let sdkError: unknown;
      await sdkBody(contents, config).catch((error) => (sdkError = error));
      expect(() => geminiRequestBody(contents, config)).toThrow(
        (sdkError as Error).message,
      );
    }
  });
});

describe('the model path (geminiModelPath)', () => {
  it.each([
    ['gemini-2.5-flash', 'models/gemini-2.5-flash'],
    ['models/gemini-2.5-pro', 'models/gemini-2.5-pro'],
    ['tunedModels/mine-1', 'tunedModels/mine-1'],
  ])('%s → %s', (name, path) => {
    expect(geminiModelPath(name)).toBe(path);
  });

  it.each(['../../v1/files', 'gemini?key=x', 'a&b', ''])(
    'refuses %j as the SDK does',
    async (name) => {
      const { ai } = sdk();
      let sdkError: unknown;
      await ai.models
        .generateContentStream({ model: name, contents: 'hi' })
        .catch((error) => (sdkError = error));
      expect(sdkError).toBeInstanceOf(Error);
      expect(() => geminiModelPath(name)).toThrow((sdkError as Error).message);
    },
  );
});

describe('the request on the wire (GeminiClient.streamGenerateContent)', () => {
  it('goes to the URL, with the headers, the SDK uses', async () => {
    const { ai, wire: sdkWire } = sdk();
    await drain(
      await ai.models.generateContentStream({
        model: MODEL,
        contents: 'hi',
      }),
    );
    const wire: Wire = { sent: [], replies: [] };
    const client = new GeminiClient(clientOptions(wire));
    await drain(
      await client.streamGenerateContent(
        MODEL,
        '{}',
        new AbortController().signal,
      ),
    );
    expect(wire.sent[0].url).toBe(sdkWire.sent[0].url);
    expect(wire.sent[0].headers).toEqual(sdkWire.sent[0].headers);
  });
});

const piece = (
  content: Content | undefined,
  finishReason?: string,
): Record<string, unknown> => ({
  candidates: [
    {
      ...(content ? { content } : {}),
      ...(finishReason ? { finishReason } : {}),
    },
  ],
  usageMetadata: { promptTokenCount: 3, totalTokenCount: 5 },
});

describe('the conversation (GeminiConversation)', () => {
  it.each<[string, Content[], unknown[]]>([
    [
      'a reply in two pieces',
      [],
      [piece(model({ text: 'Hel' })), piece(model({ text: 'lo' }), 'STOP')],
    ],
    [
      'function calls with thought signatures',
      RICH_HISTORY.slice(0, 4),
      [
        piece(
          model({
            functionCall: { id: 'c2', name: 'db_query', args: {} },
            thoughtSignature: 'c2ln',
          }),
          'STOP',
        ),
      ],
    ],
    [
      'a reply without a finish reason',
      [user({ text: 'a' }), model({ text: 'b' })],
      [piece(model({ text: 'Hel' })), piece(model({ text: 'lo' }))],
    ],
    [
      'a usage-only last piece',
      [],
      [
        piece(model({ text: 'Hi' })),
        { usageMetadata: { totalTokenCount: 4 } },
        piece(undefined, 'STOP'),
      ],
    ],
    ['a piece with no parts', [], [piece(model(), 'STOP')]],
    ['a piece with an empty part', [], [piece(model({}), 'STOP')]],
    [
      'a content without a role',
      [],
      [piece({ parts: [{ text: 'Hi' }] }, 'STOP')],
    ],
    [
      'a history holding an invalid model content',
      [
        user({ text: 'lost' }),
        model(),
        user({ text: 'kept' }),
        model({ text: 'yes' }),
      ],
      [piece(model({ text: 'ok' }), 'STOP')],
    ],
  ])(
    '%s: the next request carries what the SDK chat sends',
    async (_label, history, reply) => {
      const config = { systemPrompt: 'You are Metatron.', tools: null };
      const next = [{ text: 'And then?' }];
      const { ai, wire } = sdk();
      wire.replies.push(reply, [piece(model({ text: '.' }), 'STOP')]);
      const chat = ai.chats.create({
        model: MODEL,
        history: structuredClone(history),
        config: sdkConfig(config),
      });
      await drain(await chat.sendMessageStream({ message: [{ text: 'Go' }] }));
      await drain(await chat.sendMessageStream({ message: next }));

      const conversation = new GeminiConversation(structuredClone(history));
      const first = conversation.contentsFor([{ text: 'Go' }]);
      expect(geminiRequestBody(first.contents, config)).toBe(wire.sent[0].body);
      conversation.record(first.input, structuredClone(reply) as never);
      const second = conversation.contentsFor(next);
      expect(geminiRequestBody(second.contents, config)).toBe(
        wire.sent[1].body,
      );
    },
  );

  it('leaves out a reply whose content has another role, where the SDK chat would loop for ever', () => {
    const conversation = new GeminiConversation([
      user({ text: 'kept' }),
      model({ text: 'yes' }),
    ]);
    const first = conversation.contentsFor([{ text: 'Go' }]);
    conversation.record(first.input, [
      piece({ role: 'tool', parts: [{ text: 'odd' }] }, 'STOP'),
    ] as never);
    expect(conversation.contentsFor([{ text: 'next' }]).contents).toEqual([
      user({ text: 'kept' }),
      model({ text: 'yes' }),
      user({ text: 'next' }),
    ]);
  });

  it('refuses a role the SDK refuses, and an empty message', () => {
    expect(
      () =>
        new GeminiConversation([{ role: 'system', parts: [{ text: 'x' }] }]),
    ).toThrow('Role must be user or model, but got system.');
    expect(() => new GeminiConversation([]).contentsFor([])).toThrow(
      'PartListUnion is required',
    );
  });
});

import { PNG } from 'pngjs';
import {
  FAKE_PNG,
  makePng,
  startFakeLlmServer,
  type FakeLlmServer,
} from '../../../../../tools/fake-llm/fake-llm-server';

// The fake upstream itself, spoken to with plain fetch (the adapter specs drive it through the SDKs).
let server: FakeLlmServer;

beforeAll(async () => {
  server = await startFakeLlmServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => server.reset());

function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

function sseData(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
}

describe('fake LLM server', () => {
  it('exposes the base URLs of both SDKs', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.openaiBaseUrl).toBe(`${server.url}/v1`);
    expect(server.geminiBaseUrl).toBe(server.url);
  });

  it('streams OpenAI chunks with split tool-call arguments, usage last, then [DONE]', async () => {
    server.openai.enqueue({
      text: ['Hi'],
      toolCalls: [
        { id: 'call_x', name: 'f', arguments: { query: 'something long' } },
      ],
    });
    const res = await post(
      '/v1/chat/completions',
      {
        model: 'gpt-x',
        stream: true,
        stream_options: { include_usage: true },
        messages: [],
      },
      { authorization: 'Bearer sk-abc' },
    );

    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = sseData(await res.text());
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks[0].choices[0].delta).toEqual({
      role: 'assistant',
      content: '',
      refusal: null,
    });
    const argumentPieces = chunks
      .flatMap((c) => c.choices[0]?.delta?.tool_calls ?? [])
      .map((t: { function: { arguments: string } }) => t.function.arguments)
      .filter(Boolean);
    expect(argumentPieces.length).toBeGreaterThan(1);
    expect(argumentPieces.join('')).toBe('{"query":"something long"}');
    expect(chunks.at(-2).choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
    expect(server.openai.requests[0]).toMatchObject({
      apiKey: 'sk-abc',
      model: 'gpt-x',
      stream: true,
    });
  });

  it('answers non-streaming requests with one JSON completion', async () => {
    server.openai.enqueue({ text: ['a', 'b'] });
    server.gemini.enqueue({
      text: ['c', 'd'],
      toolCalls: [{ name: 'g', arguments: { n: 1 } }],
    });

    const openai = await (
      await post('/v1/chat/completions', { model: 'gpt-x', messages: [] })
    ).json();
    expect(openai.choices[0]).toMatchObject({
      message: { role: 'assistant', content: 'ab' },
      finish_reason: 'stop',
    });

    const res = await post(
      '/v1beta/models/gemini-x:generateContent',
      { contents: [] },
      { 'x-goog-api-key': 'AIza-k' },
    );
    const gemini = await res.json();
    expect(gemini.candidates[0]).toMatchObject({
      content: {
        role: 'model',
        parts: [
          { text: 'cd' },
          { functionCall: { name: 'g', args: { n: 1 } } },
        ],
      },
      finishReason: 'STOP',
    });
    expect(server.gemini.requests[0]).toMatchObject({
      apiKey: 'AIza-k',
      model: 'gemini-x',
      stream: false,
    });
  });

  it('streams Gemini chunks with a finish reason and usage on the last one', async () => {
    server.gemini.enqueue({
      text: ['x', 'y'],
      usage: { promptTokens: 3, completionTokens: 2 },
    });
    const res = await post(
      '/v1beta/models/gemini-x:streamGenerateContent?alt=sse',
      { contents: [] },
    );
    const chunks = sseData(await res.text()).map((e) => JSON.parse(e));
    expect(chunks).toHaveLength(2);
    expect(chunks[0].candidates[0].finishReason).toBeUndefined();
    expect(chunks[1].candidates[0]).toMatchObject({
      content: { parts: [{ text: 'y' }] },
      finishReason: 'STOP',
    });
    expect(chunks[1].usageMetadata).toEqual({
      promptTokenCount: 3,
      candidatesTokenCount: 2,
      totalTokenCount: 5,
    });
  });

  it("answers errors in each provider's shape", async () => {
    server.openai.enqueue({ status: 429, message: 'slow down' });
    server.gemini.enqueue({ status: 429, message: 'quota' });

    const openai = await post('/v1/chat/completions', {
      model: 'm',
      messages: [],
    });
    expect(openai.status).toBe(429);
    expect(await openai.json()).toEqual({
      error: {
        message: 'slow down',
        type: 'requests',
        param: null,
        code: 'rate_limit_exceeded',
      },
    });

    const gemini = await post(
      '/v1beta/models/m:streamGenerateContent?alt=sse',
      {},
    );
    expect(gemini.status).toBe(429);
    expect(await gemini.json()).toEqual({
      error: { code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED' },
    });
  });

  it('uses the fallback, or a 500, when the queue is empty, and lets a function choose the reply', async () => {
    const empty = await post('/v1/chat/completions', {
      model: 'm',
      messages: [],
    });
    expect(empty.status).toBe(500);

    server.openai.fallback = (request) => ({
      text: [`echo ${request.body.messages[0].content}`],
    });
    const echoed = await (
      await post('/v1/chat/completions', {
        model: 'm',
        messages: [{ role: 'user', content: 'ping' }],
      })
    ).json();
    expect(echoed.choices[0].message.content).toBe('echo ping');
    expect(server.openai.pending).toBe(0);
    expect(server.openai.requests).toHaveLength(2);
  });

  it('answers unknown routes with 404', async () => {
    const res = await post('/v1/no-such-route', {});
    expect(res.status).toBe(404);
  });

  it('records an image edit: its text fields as the body and each file part with its name and type', async () => {
    const form = new FormData();
    form.append('model', 'gpt-image-1');
    form.append('prompt', 'make it blue');
    const photo = makePng(2, 2, [0, 0, 255]);
    form.append(
      'image[]',
      new Blob([new Uint8Array(photo)], { type: 'image/png' }),
      'phötö 1.png',
    );
    form.append(
      'image[]',
      new Blob([new Uint8Array(Buffer.from('plain'))], { type: 'text/plain' }),
      'notes.txt',
    );
    const res = await fetch(`${server.openaiBaseUrl}/images/edits`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-edit' },
      body: form,
    });
    expect(res.status).toBe(200);
    const [request] = server.openaiImages.requests;
    expect(request.body).toEqual({
      model: 'gpt-image-1',
      prompt: 'make it blue',
    });
    expect(request.model).toBe('gpt-image-1');
    expect(request.apiKey).toBe('sk-edit');
    expect(
      request.files?.map(({ field, filename, contentType }) => ({
        field,
        filename,
        contentType,
      })),
    ).toEqual([
      { field: 'image[]', filename: 'phötö 1.png', contentType: 'image/png' },
      { field: 'image[]', filename: 'notes.txt', contentType: 'text/plain' },
    ]);
    expect(request.files?.[0].data.equals(photo)).toBe(true);
    expect(request.files?.[1].data.toString()).toBe('plain');
  });

  it('makes real PNGs of the asked size and colour', () => {
    const decoded = PNG.sync.read(makePng(5, 2, [10, 20, 30]));
    expect([decoded.width, decoded.height]).toEqual([5, 2]);
    expect([...decoded.data.subarray(0, 4)]).toEqual([10, 20, 30, 255]);
    expect([...decoded.data.subarray(-4)]).toEqual([10, 20, 30, 255]);
    expect(PNG.sync.read(FAKE_PNG)).toMatchObject({ width: 4, height: 3 });
  });
});

import { createRecordingSink } from '../../../../../tools/fake-llm/recording-sink';
import {
  failure,
  HISTORY_WITH_TOOL_CALLS,
  testAdapterContract,
  TOOLS,
  turnBuilder,
  useFakeLlmServer,
} from '../../../test/support/adapter-contract';
import { OpenAiAdapter } from './openai-adapter';

const KEY = 'sk-test-secret-key-0123456789';
const MODEL = 'gpt-test';

const fake = useFakeLlmServer();

/** Named "OpenAI" even with a base URL (the fake's), as for OpenAI's own API. */
function adapter(baseUrl: string | undefined): OpenAiAdapter {
  return new OpenAiAdapter({ apiKey: KEY, baseUrl }, 'OpenAI');
}

const turn = turnBuilder(MODEL);

describe('OpenAiAdapter', () => {
  testAdapterContract({
    label: 'OpenAI',
    apiKey: KEY,
    model: MODEL,
    provider: () => fake.server.openai,
    fakeBaseUrl: () => fake.server.openaiBaseUrl,
    baseUrlAt: (port) => `http://127.0.0.1:${port}/v1`,
    adapter,
    baseUrlVariable: 'OPENAI_BASE_URL',
    defaultBaseUrl: 'https://api.openai.com/v1',
    callsCarryIds: true,
    badRequest: {
      providerMessage: `  Invalid 'messages[1].content' for key ${KEY}:\n too long.  `,
      expectedMessage:
        "OpenAI rejected the request (400): Invalid 'messages[1].content' for key ••••: too long.",
    },
    wire: {
      plainTurn(request) {
        expect(request.body).toMatchObject({
          model: MODEL,
          stream: true,
          stream_options: { include_usage: true },
        });
        expect(request.body.messages).toEqual([
          { role: 'system', content: 'You are Metatron.' },
          { role: 'user', content: 'Hello?' },
        ]);
      },
      noTools(request) {
        expect(request.body.tools).toBeUndefined();
        expect(request.body.tool_choice).toBeUndefined();
      },
      toolsOffered(request) {
        expect(request.body.tools).toEqual([
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
        expect(request.body).toMatchObject({
          stream: true,
          stream_options: { include_usage: true },
        });
      },
      oneRoundSentBack(request) {
        expect(request.body.messages.slice(2)).toEqual([
          {
            role: 'assistant',
            content: 'Let me look.',
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: {
                  name: 'db_query',
                  arguments: '{"operation":"find","collection":"contacts"}',
                },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '[{"name":"Ann"}]' },
        ]);
      },
      resultsSentBack(request) {
        const toolMessages = request.body.messages.filter(
          (m: { role: string }) => m.role === 'tool',
        );
        expect(toolMessages).toEqual([
          { role: 'tool', tool_call_id: 'call_1', content: '{"ran":"call_1"}' },
          { role: 'tool', tool_call_id: 'call_2', content: '{"ran":"call_2"}' },
          { role: 'tool', tool_call_id: 'call_3', content: '{"ran":"call_3"}' },
        ]);
      },
      toolErrorSentBack(request) {
        expect(request.body.messages.at(-1)).toEqual({
          role: 'tool',
          tool_call_id: 'call_1',
          content: '{"error":"Memory is full"}',
        });
      },
    },
  });

  it('answers invalid JSON arguments with an error for the model, without running the tool', async () => {
    fake.server.openai.enqueue(
      {
        toolCalls: [
          { id: 'call_bad', name: 'db_query', arguments: '{"operation": ' },
        ],
      },
      { text: ['Oops.'] },
    );
    const sink = createRecordingSink();

    await adapter(fake.server.openaiBaseUrl).streamTurn(
      turn({ tools: TOOLS }),
      sink,
    );

    expect(sink.toolCalls).toEqual([]);
    expect(fake.server.openai.requests[1].body.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_bad',
      content: '{"error":"The tool arguments are not valid JSON."}',
    });
  });

  it('names an OpenAI-compatible endpoint in its errors', async () => {
    fake.server.openai.enqueue({ status: 401, message: 'no' });
    const error = await failure(
      new OpenAiAdapter(
        { apiKey: '', baseUrl: fake.server.openaiBaseUrl },
        'ollama',
      ).streamTurn(turn(), createRecordingSink()),
    );
    expect(error.message).toBe('The ollama API key was rejected (401).');
    // An empty key is sent as a placeholder (the SDK refuses none).
    expect(fake.server.openai.requests[0].apiKey).toBe('no-key');
  });

  it('maps earlier tool turns into assistant/tool messages and sends no system message for a null prompt', async () => {
    fake.server.openai.enqueue({ text: ['ok'] });
    await adapter(fake.server.openaiBaseUrl).streamTurn(
      turn({
        systemPrompt: null,
        history: [
          ...HISTORY_WITH_TOOL_CALLS,
          { role: 'user', text: 'Thanks' },
          { role: 'assistant', parts: [{ type: 'text', text: 'Welcome' }] },
        ],
        userMessage: 'Again?',
      }),
      createRecordingSink(),
    );

    expect(fake.server.openai.requests[0].body.messages).toEqual([
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
});

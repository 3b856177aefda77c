import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import type { LlmToolSpec } from '../llm-adapter';
import { toolSpec } from '../../../test/support/adapter-contract';
import { encodedBody } from './openai-adapter';

/** A streamed request's body as the SDK's `chat.completions.create` would send it. */
function expected(
  body: ChatCompletionCreateParamsStreaming,
  tools: LlmToolSpec[],
): unknown {
  return tools.length
    ? {
        ...body,
        tools: tools.map((spec) => ({
          type: 'function',
          function: {
            name: spec.name,
            description: spec.description,
            parameters: spec.parameters,
          },
        })),
      }
    : body;
}

const tool = toolSpec;

const request = (content: string): ChatCompletionCreateParamsStreaming => ({
  model: 'gpt-4.1-mini',
  stream: true,
  stream_options: { include_usage: true },
  messages: [
    { role: 'system', content: 'You are Metatron.' },
    { role: 'user', content },
  ],
});

describe('the OpenAI request body (encodedBody)', () => {
  it.each([
    ['ASCII, no tools', request('Say hello'), []],
    ['ASCII, one tool', request('Say hello'), [tool('db_query', 'Reads')]],
    [
      'ASCII, three tools',
      request('Look up my contacts'),
      [tool('a', 'First'), tool('b', 'Second'), tool('c', 'Third')],
    ],
    [
      'non-ASCII text in the messages and the tools (two-byte strings, an emoji, a lone surrogate)',
      request('Grüße — “quoted” 👋 \ud800 end'),
      [tool('notes', 'Recherche « mémoire » — 日本語'), tool('x', '€')],
    ],
    [
      'a body over the buffer pool (64 KiB of text)',
      request('é'.repeat(32 * 1024)),
      [tool('big', 'ß'.repeat(5000))],
    ],
  ])('%s: the same JSON as the SDK would send', (_, body, tools) => {
    const bytes = encodedBody(body, tools);
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(JSON.parse(bytes.toString('utf8'))).toEqual(
      JSON.parse(JSON.stringify(expected(body, tools))),
    );
    if (!tools.length) expect(bytes.toString('utf8')).not.toContain('tools');
  });

  it.each<[string, ChatCompletionCreateParamsStreaming]>([
    [
      'a system message alone',
      {
        ...request('x'),
        messages: [{ role: 'system', content: 'Only «this»' }],
      },
    ],
    [
      'a system message with a name (not kept, written as it is)',
      {
        ...request('x'),
        messages: [
          { role: 'system', content: 'You are Metatron.', name: 'core' },
          { role: 'user', content: 'hi' },
        ],
      },
    ],
    [
      'no system message',
      { ...request('x'), messages: [{ role: 'user', content: 'hi' }] },
    ],
    [
      'a model name and a prompt holding the messages key',
      {
        ...request('"messages":[ \\"messages\\":['),
        model: 'm"messages":[x',
        messages: [
          { role: 'system', content: '"messages":[{"role":"user"}]' },
          { role: 'user', content: '"messages":[' },
        ],
      },
    ],
  ])('%s: the same JSON as the SDK would send', (_, body) => {
    for (const tools of [[], [tool('db_query', 'Reads')]])
      expect(JSON.parse(encodedBody(body, tools).toString('utf8'))).toEqual(
        JSON.parse(JSON.stringify(expected(body, tools))),
      );
  });

  it('a system prompt’s JSON is kept by its text, whichever string holds it', () => {
    const prompt = (minute: number) =>
      ['You are Metatron.', `It is 10:0${minute}.`, '“Quoted” ✓'].join('\n');
    const withPrompt = (text: string): ChatCompletionCreateParamsStreaming => ({
      ...request('hello'),
      messages: [
        { role: 'system', content: text },
        { role: 'user', content: 'hello' },
      ],
    });
    const first = encodedBody(withPrompt(prompt(1)), []).toString();
    // Built anew, equal text: the same bytes.
    expect(encodedBody(withPrompt(prompt(1)), []).toString()).toBe(first);
    // Another text (the next minute) is never answered with a kept one, nor after more prompts than are kept.
    for (let minute = 2; minute <= 8; minute++)
      expect(
        JSON.parse(encodedBody(withPrompt(prompt(minute)), []).toString())
          .messages[0].content,
      ).toBe(prompt(minute));
    expect(
      JSON.parse(encodedBody(withPrompt(prompt(1)), []).toString()).messages[0]
        .content,
    ).toBe(prompt(1));
  });

  it('a spec’s JSON is made once and reused; another spec gets its own', () => {
    const spec = tool('db_query', 'Reads');
    const first = encodedBody(request('one'), [spec]).toString();
    // A spec is never changed in place; changing it here shows its bytes were kept.
    spec.description = 'Changed';
    const second = encodedBody(request('one'), [spec]).toString();
    expect(second).toBe(first);
    const other = encodedBody(request('one'), [{ ...spec }]).toString();
    expect(other).toContain('"description":"Changed"');
  });

  it('each request gets its own bytes (a later request does not change an earlier one)', () => {
    const spec = tool('db_query', 'Reads');
    const first = encodedBody(request('first'), [spec]);
    const kept = Buffer.from(first).toString();
    encodedBody(request('second, longer than the first'), [spec]);
    expect(first.toString()).toBe(kept);
  });
});

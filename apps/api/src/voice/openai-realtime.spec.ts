import { parseServerEvent, redactKey, sessionBody } from './openai-realtime';

describe('the OpenAI Realtime GA wire', () => {
  const call = {
    type: 'function_call',
    call_id: 'call_1',
    name: 'db_query',
    arguments: '{"operation":"find"}',
  };
  const asCall = {
    type: 'function-call',
    callId: 'call_1',
    name: 'db_query',
    arguments: '{"operation":"find"}',
  };

  it('reads a function call from each of its three announcements', () => {
    expect(
      parseServerEvent(
        JSON.stringify({
          type: 'response.function_call_arguments.done',
          response_id: 'r1',
          item_id: 'i1',
          call_id: 'call_1',
          name: 'db_query',
          arguments: '{"operation":"find"}',
        }),
      ),
    ).toEqual([asCall]);
    expect(
      parseServerEvent(
        JSON.stringify({ type: 'response.output_item.done', item: call }),
      ),
    ).toEqual([asCall]);
    expect(
      parseServerEvent(
        JSON.stringify({
          type: 'response.done',
          response: {
            id: 'r1',
            output: [{ type: 'message', content: [] }, call],
            usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10 },
          },
        }),
      ),
    ).toEqual([
      asCall,
      {
        type: 'response-done',
        responseId: 'r1',
        usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 },
      },
    ]);
  });

  it('reads the words of both sides and the start of speech', () => {
    expect(
      parseServerEvent(
        JSON.stringify({
          type: 'conversation.item.input_audio_transcription.completed',
          item_id: 'u1',
          transcript: 'Hello',
        }),
      ),
    ).toEqual([{ type: 'owner-transcript', itemId: 'u1', text: 'Hello' }]);
    expect(
      parseServerEvent(
        JSON.stringify({
          type: 'response.output_audio_transcript.done',
          response_id: 'r2',
          transcript: 'Hi',
        }),
      ),
    ).toEqual([{ type: 'assistant-transcript', responseId: 'r2', text: 'Hi' }]);
    expect(
      parseServerEvent(
        JSON.stringify({
          type: 'input_audio_buffer.speech_started',
          item_id: 'u2',
        }),
      ),
    ).toEqual([{ type: 'speech-started', itemId: 'u2' }]);
  });

  it.each([
    'not json',
    '[]',
    'null',
    '{"no":"type"}',
    '{"type":"response.output_item.done","item":"x"}',
    '{"type":"response.output_item.done","item":{"type":"message"}}',
    '{"type":"response.function_call_arguments.done","call_id":5,"name":"x"}',
    '{"type":"conversation.item.input_audio_transcription.completed","transcript":3}',
    '{"type":"brand.new.event"}',
  ])('ignores %s', (raw) => {
    expect(parseServerEvent(raw)).toEqual([]);
  });

  it('sends the GA session: type realtime, transcription, server VAD, voice, function tools', () => {
    expect(
      sessionBody({
        model: 'gpt-realtime',
        voice: 'marin',
        instructions: 'Be brief.',
        tools: [
          {
            name: 'set_mode',
            description: 'Switch',
            parameters: { type: 'object', properties: {} },
          },
        ],
      }),
    ).toEqual({
      type: 'realtime',
      model: 'gpt-realtime',
      instructions: 'Be brief.',
      audio: {
        input: {
          transcription: { model: expect.any(String) },
          turn_detection: { type: 'server_vad', create_response: true },
        },
        output: { voice: 'marin' },
      },
      tools: [
        {
          type: 'function',
          name: 'set_mode',
          description: 'Switch',
          parameters: { type: 'object', properties: {} },
        },
      ],
      tool_choice: 'auto',
    });
  });

  it('cuts the key, and anything shaped like one, out of provider text', () => {
    expect(
      redactKey(
        'Incorrect API key provided: sk-proj-abc123XYZ.',
        'sk-proj-abc123XYZ',
      ),
    ).toBe('Incorrect API key provided: [key].');
    expect(redactKey('key sk-other****1234 refused', 'x')).toBe(
      'key [key] refused',
    );
  });
});

import {
  nextStatus,
  voiceProblem,
  type VoiceCallStatus,
} from './voice-call-state';

const LISTENING: VoiceCallStatus = {
  phase: 'listening',
  tool: null,
  mode: null,
};

describe('voice call status', () => {
  it('follows the provider: speaking, listening again, a tool running in words', () => {
    let s = nextStatus(LISTENING, { type: 'output_audio_buffer.started' });
    expect(s.phase).toBe('speaking');
    s = nextStatus(s, { type: 'input_audio_buffer.speech_started' });
    expect(s.phase).toBe('listening');
    s = nextStatus(s, {
      type: 'response.function_call_arguments.done',
      name: 'email_actions',
      arguments: '{}',
    });
    expect(s).toEqual({ phase: 'tool', tool: 'email actions', mode: null });
  });

  it('shows the mode set_mode switches to', () => {
    const s = nextStatus(LISTENING, {
      type: 'response.function_call_arguments.done',
      name: 'set_mode',
      arguments: '{"mode":"calendar"}',
    });
    expect(s.mode).toBe('calendar');
  });

  it.each([null, 'text', 42, { type: 'something.new' }, { no: 'type' }])(
    'ignores %p',
    (event) => {
      expect(nextStatus(LISTENING, event)).toBe(LISTENING);
    },
  );

  it('keeps the mode when set_mode arguments are malformed', () => {
    const s = nextStatus(
      { ...LISTENING, mode: 'email' },
      {
        type: 'response.function_call_arguments.done',
        name: 'set_mode',
        arguments: '{oops',
      },
    );
    expect(s.mode).toBe('email');
  });
});

describe('voice problems in plain words', () => {
  it.each([
    [{ name: 'NotAllowedError' }, /microphone is blocked/],
    [{ name: 'NotFoundError' }, /No microphone/],
    [{ name: 'NotReadableError' }, /in use by another program/],
    [
      { status: 409, error: { message: 'No OpenAI API key is set…' } },
      /need an OpenAI API key/,
    ],
    [
      {
        status: 409,
        error: { message: "A voice call is already live ('rtc_1')" },
      },
      /rtc_1/,
    ],
    [
      {
        status: 502,
        error: { message: 'OpenAI refused the API key: check it.' },
      },
      /refused the API key/,
    ],
    [{ status: 0 }, /network is lost/],
    [new Error('boom'), /could not start/],
  ])('%p', (error, text) => {
    expect(voiceProblem(error)).toMatch(text);
  });
});

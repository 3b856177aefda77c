import { relayStatus } from './voice-relay-link';
import type { VoiceCallStatus } from './voice-call-state';

const CONNECTING: VoiceCallStatus = {
  phase: 'connecting',
  tool: null,
  mode: null,
};

describe('relayStatus (the call bar during a Gemini relay call)', () => {
  it('listens once the relay is ready, and again after an interruption', () => {
    expect(relayStatus(CONNECTING, { type: 'ready', callId: 'x' })).toEqual({
      phase: 'listening',
      tool: null,
      mode: null,
    });
    expect(
      relayStatus(
        { phase: 'speaking', tool: null, mode: 'data' },
        { type: 'interrupted' },
      ),
    ).toEqual({ phase: 'listening', tool: null, mode: 'data' });
  });

  it('names a running tool in words and keeps a switched mode', () => {
    const tool = relayStatus(CONNECTING, {
      type: 'tool',
      name: 'email_search',
    });
    expect(tool).toMatchObject({ phase: 'tool', tool: 'email search' });
    expect(relayStatus(tool, { type: 'mode', mode: 'email' })).toMatchObject({
      phase: 'tool',
      mode: 'email',
    });
  });

  it.each([
    null,
    'text',
    42,
    { type: 'tool', name: 7 },
    { type: 'mode' },
    { type: 'who' },
  ])('changes nothing for %p', (message) => {
    expect(relayStatus(CONNECTING, message)).toBe(CONNECTING);
  });
});

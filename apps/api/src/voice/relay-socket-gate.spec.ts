import { decideRelayUpgrade } from './relay-socket-gate';

const POLICY = {
  allowedHosts: ['127.0.0.1', 'localhost', '::1'],
  trustedOrigins: ['https://metatron.example'],
};
const PATH = '/api/voice/relay/gemini_abc123';
const COOKIE = 'theme=dark; metatron_session=tok%3Den';

function decide(
  headers: Record<string, string>,
  url = PATH,
  encrypted = false,
) {
  return decideRelayUpgrade(
    { url, headers: { host: '127.0.0.1:3000', ...headers } },
    encrypted,
    POLICY,
  );
}

describe('decideRelayUpgrade (who may open a call audio socket)', () => {
  it.each([
    ['the console itself', { origin: 'http://127.0.0.1:3000', cookie: COOKIE }],
    [
      'localhost for 127.0.0.1',
      { origin: 'http://localhost:3000', cookie: COOKIE },
    ],
    [
      'a trusted proxy origin',
      { origin: 'https://metatron.example', cookie: COOKIE },
    ],
    ['a script (no Origin)', { cookie: COOKIE }],
    [
      'same-origin fetch metadata',
      {
        origin: 'http://127.0.0.1:3000',
        'sec-fetch-site': 'same-origin',
        cookie: COOKIE,
      },
    ],
  ])('lets in %s with the session cookie', (_, headers) => {
    expect(decide(headers)).toEqual({
      allowed: true,
      callId: 'gemini_abc123',
      sessionToken: 'tok=en',
    });
  });

  it.each([
    [
      'another port of the same host',
      { origin: 'http://127.0.0.1:4000', cookie: COOKIE },
      403,
    ],
    ['another site', { origin: 'https://evil.example', cookie: COOKIE }, 403],
    [
      'http for an https server',
      { origin: 'http://127.0.0.1:3000', cookie: COOKIE },
      403,
      true,
    ],
    ['a null origin', { origin: 'null', cookie: COOKIE }, 403],
    [
      'cross-site fetch metadata',
      {
        origin: 'http://127.0.0.1:3000',
        'sec-fetch-site': 'cross-site',
        cookie: COOKIE,
      },
      403,
    ],
    ['no session cookie', { origin: 'http://127.0.0.1:3000' }, 401],
    [
      'an empty session cookie',
      { origin: 'http://127.0.0.1:3000', cookie: 'metatron_session=' },
      401,
    ],
    [
      'an unknown host (DNS rebinding)',
      { host: 'evil.example:3000', cookie: COOKIE },
      421,
    ],
  ])('refuses %s', (_, headers, status, encrypted = false) => {
    expect(
      decide(headers as Record<string, string>, PATH, encrypted),
    ).toMatchObject({
      allowed: false,
      status,
    });
  });

  it('refuses a malformed relay path, and leaves other paths to others', () => {
    expect(decide({ cookie: COOKIE }, '/api/voice/relay/../x')).toMatchObject({
      status: 404,
    });
    expect(decide({ cookie: COOKIE }, '/api/voice/relay/a%2Fb')).toMatchObject({
      status: 404,
    });
    expect(decide({ cookie: COOKIE }, '/api/events')).toBeNull();
  });
});

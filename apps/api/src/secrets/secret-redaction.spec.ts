import {
  REDACTED_SECRET,
  SecretRedactor,
  StreamingSecretRedactor,
  redactCredentialShapes,
} from './secret-redaction';

const SECRET = 'tok-Zq81xW3vRr90pLm';
const rev = (s: string) => [...s].reverse().join('');
const b64 = (s: string) => Buffer.from(s).toString('base64');
const b64url = (s: string) => Buffer.from(s).toString('base64url');
const hex = (s: string) => Buffer.from(s).toString('hex');
const wrap = (s: string, width: number) =>
  s.replace(new RegExp(`(.{${width}})`, 'g'), '$1\n');

describe('SecretRedactor', () => {
  const redactor = new SecretRedactor([
    SECRET,
    'pw',
    'hunt2',
    null,
    '',
    'Bearer ghp-profile-7788',
  ]);

  it.each<[string, string]>([
    ['plain', `Authorization: Bearer ${SECRET}`],
    ['plain in a word', `x${SECRET}y`],
    ['reversed', rev(`header: ${SECRET}\n`)],
    ['base64, aligned', b64(SECRET)],
    ['base64, one byte before', b64(`a${SECRET}`)],
    ['base64, two bytes before', b64(`ab${SECRET}`)],
    ['base64 of a whole JSON echo', b64(`{"authorization":"${SECRET}"}`)],
    ['base64url, each alignment', b64url(`??${SECRET}`) + b64url(`?${SECRET}`)],
    [
      'base64 wrapped at 76 as `base64` does',
      wrap(b64(`${'x'.repeat(70)}${SECRET}`), 76),
    ],
    ['hex lower', hex(SECRET)],
    ['hex upper', hex(`:${SECRET}`).toUpperCase()],
    ['hex wrapped (xxd -p)', wrap(hex(`${'y'.repeat(25)}${SECRET}`), 60)],
    ['plain folded over lines', wrap(SECRET, 5)],
    ['a short secret as a whole word', 'the password is hunt2.'],
    ['a secret with a space in it', 'authorization: Bearer ghp-profile-7788'],
    ['a short secret reversed, as a word', 'echo 2tnuh'],
  ])('finds %s', (_name, text) => {
    expect(redactor.detects(text)).toBe(true);
    const out = redactor.redact(text);
    expect(out).toContain(REDACTED_SECRET);
    expect(
      new SecretRedactor([SECRET, 'hunt2', 'Bearer ghp-profile-7788']).detects(
        out,
      ),
    ).toBe(false);
  });

  it.each<[string, string]>([
    ['unrelated text', 'nothing to see here, principalUrl and password'],
    ['a short secret inside words', 'hunt2er and xhunt2 stay as they are'],
    ['a secret below 4 characters anywhere', 'pw is pw'],
    ['a prefix of the secret only', SECRET.slice(0, 8)],
    ['another token of the same shape', 'tok-Aq81xW3vRr90pLn'],
  ])('leaves %s alone', (_name, text) => {
    expect(redactor.detects(text)).toBe(false);
    expect(redactor.redact(text)).toBe(text);
  });

  it('keeps the words around a secret', () => {
    expect(redactor.redact(`key=${SECRET}; next`)).toBe(
      `key=${REDACTED_SECRET}; next`,
    );
  });

  it('with no secrets is a no-op', () => {
    const none = new SecretRedactor([]);
    expect(none.empty).toBe(true);
    expect(none.redact(SECRET)).toBe(SECRET);
  });
});

describe('StreamingSecretRedactor', () => {
  it('finds a secret cut across chunks, in every form, and passes other bytes through', () => {
    const body = Buffer.concat([
      Buffer.from([0, 255, 1]),
      Buffer.from(
        `echo: ${SECRET} | ${b64(`!${SECRET}`)} | ${hex(SECRET)} end`,
      ),
    ]);
    for (const size of [1, 3, 7, 64]) {
      const stream = new StreamingSecretRedactor(new SecretRedactor([SECRET]));
      const parts: Buffer[] = [];
      for (let i = 0; i < body.length; i += size)
        parts.push(stream.push(body.subarray(i, i + size)));
      parts.push(stream.end());
      const out = Buffer.concat(parts);
      expect(out.subarray(0, 3)).toEqual(Buffer.from([0, 255, 1]));
      expect(new SecretRedactor([SECRET]).detects(out.toString('latin1'))).toBe(
        false,
      );
      expect(out.toString('latin1')).toContain(' end');
      expect(stream.count).toBeGreaterThanOrEqual(3);
    }
  });
});

describe('redactCredentialShapes', () => {
  it.each([
    ['my key is sk-abcdefghijklmnopqrstuv', 'sk-abcdefghijklmnopqrstuv'],
    ['gemini AIzaSyA1234567890abcdefghijklmnopqrstu', 'AIzaSyA1234567890'],
    ['the wifi password: hunter22', 'hunter22'],
    ['My PIN is 4711', '4711'],
    ['bot 123456789:AAAbbbCCCdddEEEfffGGGhhhIIIjjjKKKl', 'AAAbbbCCC'],
    ['Authorization: Bearer abcdefghijklmnopqrstuvwx', 'abcdefghijklmnop'],
  ])('removes a credential-shaped value: %s', (text, secret) => {
    expect(redactCredentialShapes(text)).not.toContain(secret);
  });

  it('keeps the label of a "password: …" phrase, and leaves ordinary facts alone', () => {
    expect(redactCredentialShapes('the wifi password: hunter22')).toBe(
      'the wifi password: [redacted]',
    );
    const text = 'Anna is allergic to peanuts; dentist on 12 March at 10:30';
    expect(redactCredentialShapes(text)).toBe(text);
  });
});

import { redactSecrets } from './secret-redaction';

describe('redactSecrets', () => {
  it.each([
    ['my key is sk-abcdefghijklmnopqrstuv', 'sk-abcdefghijklmnopqrstuv'],
    ['gemini AIzaSyA1234567890abcdefghijklmnopqrstu', 'AIzaSyA1234567890'],
    ['the wifi password: hunter22', 'hunter22'],
    ['My PIN is 4711', '4711'],
    ['bot 123456789:AAAbbbCCCdddEEEfffGGGhhhIIIjjjKKKl', 'AAAbbbCCC'],
    ['Authorization: Bearer abcdefghijklmnopqrstuvwx', 'abcdefghijklmnop'],
  ])('removes a credential-shaped value: %s', (text, secret) => {
    expect(redactSecrets(text, [])).not.toContain(secret);
  });

  it('removes a stored secret of any shape, keeping its last four characters', () => {
    const out = redactSecrets('profile value plainword-secret-xyz1 here', [
      'plainword-secret-xyz1',
    ]);
    expect(out).not.toContain('plainword-secret');
    expect(out).toContain('xyz1');
  });

  it('leaves ordinary facts alone', () => {
    const text = 'Anna is allergic to peanuts; dentist on 12 March at 10:30';
    expect(redactSecrets(text, ['zzzz-not-there'])).toBe(text);
  });
});

import { PasswordHasher } from './password-hasher';

describe('PasswordHasher', () => {
  const hasher = new PasswordHasher({ N: 2 ** 10, r: 8, p: 1 });

  it('verifies the right password and refuses a wrong one', async () => {
    const stored = await hasher.hash('correct horse');
    expect(stored).toMatch(/^scrypt\$1024\$8\$1\$[\w-]+\$[\w-]+$/);
    await expect(hasher.verify('correct horse', stored)).resolves.toBe(true);
    await expect(hasher.verify('correct horsE', stored)).resolves.toBe(false);
  });

  it('salts every hash', async () => {
    expect(await hasher.hash('same')).not.toBe(await hasher.hash('same'));
  });

  it('refuses a malformed stored hash', async () => {
    await expect(hasher.verify('x', 'plaintext')).resolves.toBe(false);
  });
});

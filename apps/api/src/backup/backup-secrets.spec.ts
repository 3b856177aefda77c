import {
  applySecrets,
  extractSecrets,
  sealSecrets,
  unsealSecrets,
  WrongPassphraseError,
} from './backup-secrets';
import { BackupArchiveError } from './backup-archive';

const SETTINGS = {
  _id: 'app_settings',
  openaiApiKey: 'sk-openai-secret-1111',
  geminiApiKey: null,
  braveApiKey: 'BSA-brave-2222',
  telegramBotToken: '123:telegram-3333',
  timezone: 'Europe/Berlin',
  openaiCompatible: [
    { name: 'local', baseUrl: 'http://127.0.0.1:11434/v1', apiKey: 'sk-4444' },
  ],
  authProfiles: [
    {
      id: 'p1',
      urlPrefix: 'https://api.example/',
      header: 'X-Key',
      secret: 's-5555',
    },
  ],
};

describe('backup secrets', () => {
  it('strips every secret but keeps the document in its schema shape', () => {
    const { doc, secrets } = extractSecrets(SETTINGS);
    const text = JSON.stringify(doc);
    for (const secret of [
      'sk-openai-secret-1111',
      'BSA-brave-2222',
      '123:telegram-3333',
      'sk-4444',
      's-5555',
    ])
      expect(text).not.toContain(secret);
    expect(doc).toMatchObject({
      timezone: 'Europe/Berlin',
      openaiCompatible: [{ name: 'local', apiKey: null }],
      authProfiles: [{ id: 'p1', secret: '' }],
    });
    expect(applySecrets(doc, secrets)).toEqual(SETTINGS);
  });

  it('puts a key back only for the same endpoint address and the same profile', () => {
    const { doc, secrets } = extractSecrets(SETTINGS);
    const moved = {
      ...doc,
      openaiCompatible: [
        { name: 'local', baseUrl: 'http://127.0.0.1:9999/v1', apiKey: null },
      ],
      authProfiles: [
        {
          id: 'p1',
          urlPrefix: 'https://other.example/',
          header: 'X-Key',
          secret: '',
        },
      ],
    };
    const applied = applySecrets(moved, secrets);
    expect(applied['openaiCompatible']).toEqual([
      { name: 'local', baseUrl: 'http://127.0.0.1:9999/v1', apiKey: null },
    ]);
    expect(applied['authProfiles']).toEqual([
      {
        id: 'p1',
        urlPrefix: 'https://other.example/',
        header: 'X-Key',
        secret: '',
      },
    ]);
  });

  it('seals with a random salt and IV and opens only with the passphrase', async () => {
    const { secrets } = extractSecrets(SETTINGS);
    const a = await sealSecrets(secrets, 'correct horse battery');
    const b = await sealSecrets(secrets, 'correct horse battery');
    expect(a.kdf.salt).not.toBe(b.kdf.salt);
    expect(a.iv).not.toBe(b.iv);
    expect(JSON.stringify(a)).not.toContain('sk-openai-secret-1111');
    expect(await unsealSecrets(a, 'correct horse battery')).toEqual({
      ...secrets,
      mcpServers: [],
    });
    await expect(
      unsealSecrets(a, 'correct horse battery!'),
    ).rejects.toBeInstanceOf(WrongPassphraseError);
    // Any change to the ciphertext, tag or parameters is caught by the authentication.
    const flipped = Buffer.from(a.data, 'base64');
    flipped[0] ^= 1;
    await expect(
      unsealSecrets(
        { ...a, data: flipped.toString('base64') },
        'correct horse battery',
      ),
    ).rejects.toBeInstanceOf(WrongPassphraseError);
  });

  it('refuses parameters it does not know or that cost too much', async () => {
    const { secrets } = extractSecrets(SETTINGS);
    const a = await sealSecrets(secrets, 'correct horse battery');
    for (const bad of [
      { ...a, scheme: 'rot13' },
      { ...a, version: 2 },
      { ...a, kdf: { ...a.kdf, N: 2 ** 24 } },
      { ...a, kdf: { ...a.kdf, N: 1000 } },
      { ...a, kdf: { ...a.kdf, p: 64 } },
      { ...a, iv: '' },
    ])
      await expect(
        unsealSecrets(bad as typeof a, 'correct horse battery'),
      ).rejects.toBeInstanceOf(BackupArchiveError);
  });
});

import { PASSWORD_MASK } from '@metatronos/shared-types';
import { describeCalDavError } from './caldav-connection';
import { describeMailError } from './mail-connection';

const server = {
  host: 'imap.example.test',
  port: 993,
  secure: true,
  user: 'ann',
};

describe('connection errors in plain words', () => {
  it('masks a password the server echoes, and only there', () => {
    const text = describeMailError(
      'IMAP',
      { ...server, password: 's3cret-pw' },
      {
        authenticationFailed: true,
        responseText: 'LOGIN ann s3cret-pw rejected',
      },
    );
    expect(text).toBe(
      `IMAP login failed for 'ann' at imap.example.test:993: wrong user name or password (LOGIN ann ${PASSWORD_MASK} rejected).`,
    );
  });

  it('keeps its own words whole when the password is one of them', () => {
    for (const password of ['wrong', 'password', 'user']) {
      const text = describeMailError(
        'IMAP',
        { ...server, password },
        { authenticationFailed: true, responseText: 'Invalid credentials' },
      );
      expect(text).toBe(
        "IMAP login failed for 'ann' at imap.example.test:993: wrong user name or password (Invalid credentials).",
      );
    }
    expect(
      describeCalDavError(
        { url: 'https://dav.example.test/', user: 'ann', password: 'wrong' },
        new Error('Invalid credentials (401)'),
      ),
    ).toBe(
      "CalDAV login failed for 'ann' at dav.example.test: wrong user name or password.",
    );
  });

  it('masks the password in a CalDAV library message', () => {
    const text = describeCalDavError(
      { url: 'https://dav.example.test/', user: 'ann', password: 'hunter22' },
      new Error('request to https://ann:hunter22@dav.example.test failed'),
    );
    expect(text).not.toContain('hunter22');
    expect(text).toContain(PASSWORD_MASK);
  });
});

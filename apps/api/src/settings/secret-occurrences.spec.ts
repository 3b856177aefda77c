import { PASSWORD_MASK } from '@metatronos/shared-types';
import { describeCalDavError } from '../accounts/connections/caldav-connection';
import { describeMailError } from '../accounts/connections/mail-connection';
import { cleanProviderMessage } from '../llm/adapters/adapter-support';
import { ResultRedactor } from '../mongo-sandbox/result-redactor';
import { maskSecretOccurrences } from './secret-occurrences';

const M = '••••';

describe('maskSecretOccurrences: whole occurrences, and short secrets never inside words', () => {
  it.each([
    // [secret, text, expected]
    ['p', 'principalUrl not found', 'principalUrl not found'],
    ['p', 'the password p was refused', `the password ${M} was refused`],
    ['p', 'p', M],
    ['p', '(p)', `(${M})`],
    ['p', 'user:p@host', `user:${M}@host`],
    ['ab1', 'ab1ab1 ab1', `ab1ab1 ${M}`],
    ['wrong', 'wrong user name or password', `${M} user name or password`],
    ['wrong', 'wronged', 'wronged'],
    ['pass', 'password pass passé', `password ${M} passé`],
    ['pass', 'pass_word', 'pass_word'],
    ['12345', 'code 123456 and 12345.', `code 123456 and ${M}.`],
    ['ann', 'Annie ann', `Annie ${M}`],
    ['übe', 'über übe', `über ${M}`],
    ['-x-', 'a-x-b', `a${M}b`],
    // Six characters or more: every occurrence, even glued to other text.
    ['secret', 'secretary secret', `${M}ary ${M}`],
    ['hunter22', 'https://ann:hunter22@dav', `https://ann:${M}@dav`],
    ['hunter22', 'xhunter22x', `x${M}x`],
    ['sk-abcdef', 'Bearer sk-abcdef.', `Bearer ${M}.`],
    // None, empty or absent secrets change nothing.
    ['', 'nothing to hide', 'nothing to hide'],
  ])('secret %j in %j → %j', (secret, text, expected) => {
    expect(maskSecretOccurrences(text, [secret], M)).toBe(expected);
  });

  it('masks the longest secret first, and takes a mask per secret', () => {
    expect(
      maskSecretOccurrences('key abc and abcdefgh', ['abc', 'abcdefgh'], M),
    ).toBe(`key ${M} and ${M}`);
    expect(
      maskSecretOccurrences('a tok9 b', ['tok9', null, undefined], (s) =>
        s.toUpperCase(),
      ),
    ).toBe('a TOK9 b');
  });

  describe('every masker of the app follows it', () => {
    it('account connection errors (IMAP, SMTP, CalDAV)', () => {
      const server = {
        host: 'imap.example.test',
        port: 993,
        secure: true,
        user: 'ann',
        password: 'p',
      };
      expect(
        describeMailError('IMAP', server, {
          responseText: 'principalUrl p rejected',
        }),
      ).toBe(
        `The IMAP server imap.example.test:993 refused the connection: principalUrl ${PASSWORD_MASK} rejected.`,
      );
      expect(
        describeCalDavError(
          { url: 'https://dav.example.test/', user: 'ann', password: 'p' },
          new Error('cannot find principalUrl'),
        ),
      ).toBe(
        'No calendars were found at https://dav.example.test/: is it the CalDAV URL of this provider?',
      );
      expect(
        describeCalDavError(
          { url: 'https://dav.example.test/', user: 'ann', password: 'p' },
          new Error('Server said: p is not a valid principal'),
        ),
      ).not.toContain('rinci');
    });

    it('provider messages (LLM adapters)', () => {
      expect(cleanProviderMessage('Unknown parameter: temperature', 'te')).toBe(
        'Unknown parameter: temperature',
      );
      expect(cleanProviderMessage('bad key te', 'te')).toBe(`bad key ${M}`);
    });

    it('database results and errors (db_query)', () => {
      const redactor = new ResultRedactor(['abc'], false);
      expect(redactor.scrub('abcdef abc')).toBe(`abcdef ${M}`);
      expect(redactor.plain({ note: 'fabc abc' })).toEqual({
        note: `fabc ${M}`,
      });
    });
  });
});

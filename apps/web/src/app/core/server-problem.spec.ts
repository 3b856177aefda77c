import { HttpErrorResponse } from '@angular/common/http';
import {
  DATABASE_TITLE,
  SERVER_ERROR_TITLE,
  UNREACHABLE_TITLE,
  connectivityProblemFrom,
  inlineErrorMessage,
  serverProblemFrom,
} from './server-problem';

const httpError = (status: number, error: unknown = null) =>
  new HttpErrorResponse({ status, error, url: '/api/x' });

describe('server problems', () => {
  it('reports network failures and gateway errors as unreachable', () => {
    for (const status of [0, 502, 504]) {
      expect(connectivityProblemFrom(httpError(status))).toMatchObject({
        kind: 'unreachable',
        status,
        title: UNREACHABLE_TITLE,
      });
    }
  });

  it("treats a 502 the API answered itself (an upstream such as a mail server failed) as the API's own error", () => {
    const upstream = httpError(502, {
      statusCode: 502,
      message: 'SMTP refused the recipient',
      error: 'Bad Gateway',
    });
    expect(connectivityProblemFrom(upstream)).toBeNull();
    expect(inlineErrorMessage(upstream, 'Failed.')).toBe(
      'SMTP refused the recipient',
    );
    // A proxy's page is no answer of the API's.
    expect(
      connectivityProblemFrom(httpError(502, '<html>Bad Gateway</html>')),
    ).toMatchObject({ kind: 'unreachable' });
  });

  it("reports 503 as the database being down, with the server's message", () => {
    const problem = connectivityProblemFrom(
      httpError(503, { statusCode: 503, message: 'Disk full.' }),
    );
    expect(problem).toEqual({
      kind: 'database',
      status: 503,
      title: DATABASE_TITLE,
      message: 'Disk full.',
    });
  });

  it('does not repeat the title when the server message opens with it', () => {
    const problem = connectivityProblemFrom(
      httpError(503, {
        statusCode: 503,
        message:
          'The database is unavailable. Check the server log; restarting MetatronOS usually helps.',
      }),
    );
    expect(problem?.message).toBe(
      'Check the server log; restarting MetatronOS usually helps.',
    );
    expect(
      inlineErrorMessage(
        httpError(503, { message: 'The database is unavailable. Restart.' }),
        'x',
      ),
    ).toBe('The database is unavailable. Restart.');
  });

  it('leaves ordinary API errors to the caller', () => {
    for (const status of [400, 401, 404, 409, 429, 500])
      expect(connectivityProblemFrom(httpError(status))).toBeNull();
    expect(connectivityProblemFrom(new Error('boom'))).toBeNull();
  });

  it('turns anything else into a generic server error', () => {
    expect(
      serverProblemFrom(
        httpError(500, { statusCode: 500, message: 'Internal server error' }),
      ),
    ).toEqual({
      kind: 'server',
      status: 500,
      title: SERVER_ERROR_TITLE,
      message: 'Internal server error',
    });
    expect(serverProblemFrom(new Error('boom')).kind).toBe('server');
  });

  it('phrases inline errors', () => {
    expect(
      inlineErrorMessage(
        httpError(401, { statusCode: 401, message: 'Wrong password' }),
        'x',
      ),
    ).toBe('Wrong password');
    expect(inlineErrorMessage(httpError(0), 'x')).toBe(`${UNREACHABLE_TITLE}.`);
    expect(
      inlineErrorMessage(httpError(503, { message: 'Disk full.' }), 'x'),
    ).toBe('The database is unavailable. Disk full.');
    expect(inlineErrorMessage(httpError(500, '<html>'), 'Fallback.')).toBe(
      'Fallback.',
    );
  });
});

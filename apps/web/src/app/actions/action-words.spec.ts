import { HttpErrorResponse } from '@angular/common/http';
import {
  actionErrorMessage,
  actionLabel,
  actionSourceLabel,
  argumentChanges,
  taintText,
} from './action-words';

describe('action words', () => {
  it('names what a waiting call would do, by tool and by action', () => {
    expect(actionLabel('whatsapp_send_message')).toBe(
      'Send a WhatsApp message',
    );
    expect(actionLabel('email_actions', { action: 'reply' })).toBe(
      'Reply to an email',
    );
    expect(actionLabel('email_actions', { action: 'move' })).toBe(
      'Move an email',
    );
    expect(actionLabel('calendar_actions', { action: 'delete' })).toBe(
      'Delete a calendar event',
    );
    expect(actionLabel('calendar_actions', { action: 42 })).toBe(
      'Change the calendar',
    );
    expect(actionLabel('github_create_issue')).toBe('Use github create issue');
  });

  it('names the source, with the job’s name when known', () => {
    const jobs = new Map([['j1', 'Morning briefing']]);
    expect(actionSourceLabel({ source: 'cron', jobId: 'j1' }, jobs)).toBe(
      'Job “Morning briefing”',
    );
    expect(actionSourceLabel({ source: 'cron', jobId: 'gone' }, jobs)).toBe(
      'Scheduled job',
    );
    expect(actionSourceLabel({ source: 'auto-reply', jobId: null })).toBe(
      'Auto-reply',
    );
    expect(actionSourceLabel({ source: 'voice', jobId: null })).toBe(
      'Voice call',
    );
  });

  it('says what marked a turn, each mark once', () => {
    const at = '2026-11-28T09:00:00.000Z';
    expect(
      taintText([
        { by: 'url_fetch', text: 'a web page from example.org', at },
        { by: 'url_fetch', text: 'a web page from example.org', at },
        { by: 'email_actions', text: 'an email from ann@example.org', at },
      ]),
    ).toBe(
      'read third-party content: a web page from example.org; an email from ann@example.org',
    );
    expect(taintText([])).toBe('read third-party content');
  });

  it('puts 409 and 404 in plain words, other errors as the server said them', () => {
    const error = (status: number, message?: string) =>
      new HttpErrorResponse({
        status,
        error: message ? { statusCode: status, message } : null,
      });
    expect(actionErrorMessage(error(409, 'Already discarded'), 'x')).toBe(
      'This action no longer waits: already discarded.',
    );
    expect(actionErrorMessage(error(409), 'x')).toBe(
      'This action no longer waits: it was approved, discarded or expired already.',
    );
    expect(actionErrorMessage(error(404, 'Action not found'), 'x')).toBe(
      'This action no longer exists: it was removed or has expired.',
    );
    expect(actionErrorMessage(error(400, 'text must be shorter'), 'x')).toBe(
      'text must be shorter',
    );
    expect(actionErrorMessage(error(0), 'Try again.')).toBe(
      "Can't reach the MetatronOS server.",
    );
  });

  it('lists what an edit changes, added and removed keys included', () => {
    expect(
      argumentChanges(
        { to: ['a@x.org'], text: 'Hi', keep: 1 },
        { to: ['b@x.org'], text: 'Hi', keep: 1, cc: 'c@x.org' },
      ),
    ).toEqual([
      { key: 'to', before: '["a@x.org"]', after: '["b@x.org"]' },
      { key: 'cc', before: '(none)', after: 'c@x.org' },
    ]);
    expect(argumentChanges({ a: 1 }, {})).toEqual([
      { key: 'a', before: '1', after: '(none)' },
    ]);
  });
});

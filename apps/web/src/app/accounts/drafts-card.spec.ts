import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type { EmailDraftView } from '@metatronos/shared-types';
import { emailDraft } from '../testing/account-data';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import type { FakeEventStream } from '../testing/fake-event-stream';
import { DraftsCard } from './drafts-card';
import { PendingDrafts } from './pending-drafts';

describe('DraftsCard', () => {
  let http: HttpTestingController;
  let events: FakeEventStream;
  let fixture: ComponentFixture<DraftsCard>;
  const root = () => fixture.nativeElement as HTMLElement;
  const { el, all, text, texts } = testIdQueries(root);
  const stable = () => fixture.whenStable();

  function flushDrafts(
    pending: EmailDraftView[],
    failed: EmailDraftView[] = [],
  ): void {
    http.expectOne('/api/drafts?status=pending').flush(pending);
    http.expectOne('/api/drafts?status=failed').flush(failed);
  }

  async function show(
    pending: EmailDraftView[],
    failed: EmailDraftView[] = [],
  ): Promise<void> {
    fixture = TestBed.createComponent(DraftsCard);
    await stable();
    flushDrafts(pending, failed);
    await stable();
  }

  const item = (id: string) =>
    root().querySelector<HTMLElement>(`[data-draft-id="${id}"]`) ?? root();

  async function click(testId: string, scope?: ParentNode): Promise<void> {
    const target = el(testId, scope);
    if (!target) throw new Error(`nothing to click: ${testId}`);
    target.click();
    await stable();
  }

  beforeEach(() => {
    ({ http, events } = setUpApiTest(DraftsCard));
  });

  afterEach(() => {
    fixture.destroy();
    tearDownApiTest(http);
  });

  it('shows each waiting email: account, to, cc, subject, text, who wrote it with a link to its chat, and when', async () => {
    await show(
      [
        emailDraft('d1', {
          to: ['ann@example.net', 'bob@example.net'],
          cc: ['carl@example.net'],
          subject: 'Quarterly numbers',
          text: 'Hi Ann,\nthe numbers are attached.',
          source: 'pulse',
          chatId: 'chat-7',
        }),
        emailDraft('d2', {
          source: 'auto-reply',
          action: 'reply',
          repliesTo: { subject: 'Dinner on Friday?', from: 'ann@example.net' },
        }),
        emailDraft('d4', {
          source: 'cron',
          jobId: 'job-1',
          jobName: 'Morning digest',
        }),
        emailDraft('d5', { source: 'cron' }),
      ],
      [emailDraft('d3', { status: 'failed', error: 'Mailbox unavailable' })],
    );
    expect(text('drafts-card')).toContain('Emails waiting for you (5)');
    const first = item('d1');
    expect(text('draft-subject', first)).toBe('Quarterly numbers');
    expect(text('draft-from', first)).toBe('work@example.org');
    expect(text('draft-to', first)).toBe('ann@example.net, bob@example.net');
    expect(text('draft-cc', first)).toBe('carl@example.net');
    expect(el('draft-text', first)?.textContent).toBe(
      'Hi Ann,\nthe numbers are attached.',
    );
    expect(text('draft-source', first)).toBe('Email by Pulse');
    expect(el('draft-chat-link', first)?.getAttribute('href')).toBe(
      '/chat/chat-7',
    );
    const created = el('draft-created', first);
    expect(created?.getAttribute('datetime')).toBe('2026-11-28T09:00:00.000Z');
    expect(created?.textContent?.trim()).not.toBe('');
    expect(created?.getAttribute('title')).toContain('2026');

    const second = item('d2');
    expect(text('draft-source', second)).toBe('Reply by Auto-reply');
    expect(text('draft-replies-to', second)).toBe(
      'Answers “Dinner on Friday?” from ann@example.net',
    );
    expect(el('draft-replies-to', first)).toBeNull();
    // A job's draft names the job; one stored before jobs were named still says who.
    expect(text('draft-source', item('d4'))).toBe(
      'Email by job “Morning digest”',
    );
    expect(text('draft-source', item('d5'))).toBe('Email by Scheduled job');
    expect(el('draft-chat-link', second)).toBeNull();
    expect(el('draft-cc', second)).toBeNull();

    // The failed one says why and can be retried.
    const failed = item('d3');
    expect(text('draft-error', failed)).toBe('Mailbox unavailable');
    expect(text('draft-failed', failed)).toBe('Not sent');
    expect(text('send-draft', failed)).toBe('Try again');
    expect(TestBed.inject(PendingDrafts).count()).toBe(5);
  });

  it('lists each waiting draft once and never a sent one, even from a server that ignores the status filter', async () => {
    const all = [
      emailDraft('d1'),
      emailDraft('d2', { status: 'sent' }),
      emailDraft('d3', { status: 'failed', error: 'Timed out' }),
    ];
    await show(all, all);
    expect(texts('draft-subject')).toEqual(['Subject d1', 'Subject d3']);
    expect(TestBed.inject(PendingDrafts).count()).toBe(2);
  });

  it('is hidden while no email waits, and follows drafts.changed', async () => {
    await show([]);
    expect(el('drafts-card')).toBeNull();

    events.emit('drafts.changed', {
      id: 'd1',
      change: 'created',
      at: '2026-11-28T10:00:00.000Z',
    });
    flushDrafts([emailDraft('d1')]);
    await stable();
    expect(texts('draft-subject')).toEqual(['Subject d1']);
  });

  it('sends a draft: it leaves the list and the badge count', async () => {
    await show([emailDraft('d1'), emailDraft('d2')]);
    await click('send-draft', item('d1'));
    expect(text('send-draft', item('d1'))).toBe('Sending…');
    const req = http.expectOne('/api/drafts/d1/send');
    expect(req.request.method).toBe('POST');
    req.flush(
      emailDraft('d1', { status: 'sent', sentAt: '2026-11-28T10:00:00Z' }),
    );
    await stable();
    expect(texts('draft-subject')).toEqual(['Subject d2']);
    expect(TestBed.inject(PendingDrafts).count()).toBe(1);
  });

  it('shows why a send failed, keeps the draft, and sends it again on Try again', async () => {
    await show([emailDraft('d1')]);
    await click('send-draft');
    http.expectOne('/api/drafts/d1/send').flush(
      {
        statusCode: 502,
        message: 'SMTP refused the recipient ann@example.net',
        error: 'Bad Gateway',
      },
      { status: 502, statusText: 'Bad Gateway' },
    );
    await stable();
    expect(text('draft-error')).toBe(
      'SMTP refused the recipient ann@example.net',
    );
    expect(text('send-draft')).toBe('Try again');
    expect(all('draft-item')).toHaveLength(1);

    await click('send-draft');
    expect(el('draft-error')).toBeNull();
    http
      .expectOne('/api/drafts/d1/send')
      .flush(emailDraft('d1', { status: 'sent' }));
    await stable();
    expect(el('drafts-card')).toBeNull();
  });

  it('discards after a confirmation that Escape closes (focus back on Discard)', async () => {
    await show([emailDraft('d1')]);
    await click('discard-draft');
    const confirm = el('discard-draft-confirm');
    expect(confirm?.textContent).toContain(
      'Discard this email to ann@example.net?',
    );
    expect(document.activeElement).toBe(el('cancel-discard-draft'));
    confirm?.dispatchEvent(
      new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }),
    );
    await stable();
    expect(el('discard-draft-confirm')).toBeNull();
    expect(document.activeElement).toBe(el('discard-draft'));
    http.expectNone('/api/drafts/d1');

    await click('discard-draft');
    await click('confirm-discard-draft');
    const req = http.expectOne('/api/drafts/d1');
    expect(req.request.method).toBe('DELETE');
    req.flush(null, { status: 204, statusText: 'No Content' });
    await stable();
    expect(el('drafts-card')).toBeNull();
  });

  it('edits a draft inline: only the changes are sent, a wrong address is caught first', async () => {
    await show([emailDraft('d1')]);
    await click('edit-draft');
    const to = el<HTMLInputElement>('draft-to-input');
    const subject = el<HTMLInputElement>('draft-subject-input');
    if (!to || !subject) throw new Error('no edit fields');
    expect(to.value).toBe('ann@example.net');
    expect(document.activeElement).toBe(to);

    to.value = 'ann@example.net, nobody';
    to.dispatchEvent(new Event('input'));
    await stable();
    expect(text('draft-to-error')).toBe('“nobody” is not an email address.');
    expect(el<HTMLButtonElement>('save-draft')?.disabled).toBe(true);

    to.value = 'ann@example.net; bob@example.net';
    to.dispatchEvent(new Event('input'));
    subject.value = 'New subject';
    subject.dispatchEvent(new Event('input'));
    await stable();
    await click('save-draft');
    const req = http.expectOne('/api/drafts/d1');
    expect(req.request.method).toBe('PATCH');
    expect(req.request.body).toEqual({
      to: ['ann@example.net', 'bob@example.net'],
      subject: 'New subject',
    });
    req.flush(
      emailDraft('d1', {
        to: ['ann@example.net', 'bob@example.net'],
        subject: 'New subject',
      }),
    );
    await stable();
    expect(el('draft-edit-form')).toBeNull();
    expect(text('draft-subject')).toBe('New subject');
    expect(text('draft-to')).toBe('ann@example.net, bob@example.net');
  });
});

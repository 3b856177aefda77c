import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type { PendingActionView } from '@metatronos/shared-types';
import { pendingAction } from '../testing/action-data';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import type { FakeEventStream } from '../testing/fake-event-stream';
import { ActionsPage } from './actions-page';
import { PendingActions } from './pending-actions';

describe('ActionsPage', () => {
  let http: HttpTestingController;
  let events: FakeEventStream;
  let fixture: ComponentFixture<ActionsPage>;
  const root = () => fixture.nativeElement as HTMLElement;
  const { el, all, text, texts } = testIdQueries(root);
  const stable = () => fixture.whenStable();
  const PENDING = '/api/actions?status=pending';

  async function show(
    actions: PendingActionView[],
    jobs: { id: string; name: string }[] = [],
  ): Promise<void> {
    fixture = TestBed.createComponent(ActionsPage);
    await stable();
    http.expectOne(PENDING).flush(actions);
    http.expectOne('/api/cronjobs').flush(jobs);
    await stable();
  }

  const item = (id: string) =>
    root().querySelector<HTMLElement>(`[data-action-id="${id}"]`) ?? root();

  async function click(testId: string, scope?: ParentNode): Promise<void> {
    const target = el(testId, scope);
    if (!target) throw new Error(`nothing to click: ${testId}`);
    target.click();
    await stable();
  }

  async function type(testId: string, value: string): Promise<void> {
    const input = el<HTMLInputElement | HTMLTextAreaElement>(testId);
    if (!input) throw new Error(`no field: ${testId}`);
    input.value = value;
    input.dispatchEvent(new Event('input'));
    await stable();
  }

  beforeEach(() => {
    ({ http, events } = setUpApiTest(ActionsPage));
  });

  afterEach(() => {
    fixture.destroy();
    tearDownApiTest(http);
  });

  it('lists each action: the tool in words, the summary, why it waits, its source and job, when, and its expiry', async () => {
    await show(
      [
        pendingAction('a1'),
        pendingAction('a2', {
          tool: 'calendar_actions',
          arguments: { action: 'delete', id: 'ev-9' },
          summary: 'Delete “Dentist” on 2 Dec, 10:00 (every week)',
          source: 'cron',
          jobId: 'job-1',
          chatId: null,
          tainted: false,
          taint: [],
          reason: {
            kind: 'unattended',
            text: 'a scheduled job may not delete on its own',
          },
          effect: 'delete',
        }),
        pendingAction('a3', {
          source: 'pulse',
          reason: { kind: 'unattended', text: 'Pulse runs unattended' },
        }),
      ],
      [{ id: 'job-1', name: 'Morning briefing' }],
    );
    expect(text('pending-actions')).toBeTruthy();
    expect(root().textContent).toContain('Waiting for you (3)');
    const first = item('a1');
    expect(text('action-title', first)).toBe('Send a WhatsApp message');
    expect(text('action-summary', first)).toContain(
      'Send “Here are the notes” to Anna',
    );
    expect(text('action-reason', first)).toBe(
      'Waits for you: this turn read a web page from example.org',
    );
    expect(text('action-source', first)).toBe('Chat');
    expect(el('action-chat-link', first)?.getAttribute('href')).toBe(
      '/chat/chat-1',
    );
    expect(el('action-created', first)?.getAttribute('datetime')).toBe(
      '2026-11-28T09:00:00.000Z',
    );
    expect(text('action-expires', first)).toMatch(/^expires \S/);
    expect(
      el('action-expires', first)
        ?.querySelector('time')
        ?.getAttribute('datetime'),
    ).toBe('2026-11-29T09:00:00.000Z');

    const second = item('a2');
    expect(text('action-title', second)).toBe('Delete a calendar event');
    expect(text('action-source', second)).toBe('Job “Morning briefing”');
    expect(el('action-chat-link', second)).toBeNull();
    expect(text('action-reason', second)).toBe(
      'Waits for you: a scheduled job may not delete on its own',
    );
    // An unattended Pulse turn that also read third-party content names it too.
    expect(text('action-source', item('a3'))).toBe('Pulse');
    expect(text('action-taint', item('a3'))).toBe(
      'This turn read third-party content: a web page from example.org.',
    );
    expect(TestBed.inject(PendingActions).count()).toBe(3);

    // The arguments are there on request.
    await click('action-details-toggle', first);
    expect(
      all('action-arguments', first)[0]?.querySelectorAll('dt, dd'),
    ).toHaveLength(4);
    expect(text('action-arguments', first)).toContain('+491701234567');
  });

  it('says when nothing waits, and follows actions.changed', async () => {
    await show([]);
    expect(text('no-pending-actions')).toBe('Nothing waits for your approval.');

    events.emit('actions.changed', {
      id: 'a1',
      change: 'created',
      chatId: 'chat-1',
      at: '2026-11-28T10:00:00.000Z',
    });
    http.expectOne(PENDING).flush([pendingAction('a1')]);
    await stable();
    expect(all('action-item')).toHaveLength(1);
    expect(el('no-pending-actions')).toBeNull();
  });

  it('approves an action: it runs once, leaves the waiting list and shows the result', async () => {
    await show([pendingAction('a1'), pendingAction('a2')]);
    await click('approve-action', item('a1'));
    expect(text('approve-action', item('a1'))).toBe('Running…');
    expect(el<HTMLButtonElement>('discard-action', item('a1'))?.disabled).toBe(
      true,
    );
    // A second click while it runs sends nothing more.
    await click('approve-action', item('a1'));
    const req = http.expectOne('/api/actions/a1/approve');
    expect(req.request.method).toBe('POST');
    req.flush({ status: 'done', result: '{"sent":true,"to":"Anna"}' });
    await stable();

    const settled = el('settled-actions');
    expect(texts('action-title', settled ?? undefined)).toEqual([
      'Send a WhatsApp message',
    ]);
    expect(text('action-outcome', item('a1'))).toContain('Done: it ran once.');
    expect(el('approve-action', item('a1'))).toBeNull();
    await click('action-result-toggle', item('a1'));
    expect(text('action-result', item('a1'))).toBe(
      '{ "sent": true, "to": "Anna" }',
    );
    expect(
      texts('action-title', el('pending-actions') ?? undefined),
    ).toHaveLength(1);
    expect(TestBed.inject(PendingActions).count()).toBe(1);

    // The server's own event reloads; a list that still has a1 (a race) does not bring it back.
    events.emit('actions.changed', {
      id: 'a1',
      change: 'done',
      chatId: 'chat-1',
      at: '2026-11-28T10:00:00.000Z',
    });
    http.expectOne(PENDING).flush([pendingAction('a1'), pendingAction('a2')]);
    await stable();
    expect(all('approve-action')).toHaveLength(1);
  });

  it('shows a failed run with its error', async () => {
    await show([pendingAction('a1')]);
    await click('approve-action');
    http.expectOne('/api/actions/a1/approve').flush({
      status: 'failed',
      result: null,
      error: 'WhatsApp is not connected',
    });
    await stable();
    expect(text('action-outcome')).toBe('Failed: WhatsApp is not connected');
    expect(el('action-result-toggle')).toBeNull();
  });

  it('says in words when the action no longer waits (409) or is unknown (404), and keeps it until the list reloads', async () => {
    await show([pendingAction('a1'), pendingAction('a2')]);
    await click('approve-action', item('a1'));
    http
      .expectOne('/api/actions/a1/approve')
      .flush(
        { statusCode: 409, message: 'Already approved', error: 'Conflict' },
        { status: 409, statusText: 'Conflict' },
      );
    await stable();
    expect(text('action-error', item('a1'))).toBe(
      'This action no longer waits: already approved.',
    );
    expect(el<HTMLButtonElement>('approve-action', item('a1'))?.disabled).toBe(
      false,
    );

    await click('discard-action', item('a2'));
    http
      .expectOne('/api/actions/a2/discard')
      .flush(
        { statusCode: 404, message: 'Not found' },
        { status: 404, statusText: 'Not Found' },
      );
    await stable();
    expect(text('action-error', item('a2'))).toBe(
      'This action no longer exists: it was removed or has expired.',
    );
  });

  it('discards an action: nothing runs, it says so', async () => {
    await show([pendingAction('a1')]);
    await click('discard-action');
    const req = http.expectOne('/api/actions/a1/discard');
    expect(req.request.method).toBe('POST');
    req.flush({ status: 'discarded' });
    await stable();
    expect(text('action-outcome')).toBe('Discarded: nothing was done.');
    expect(text('no-pending-actions')).toBe('Nothing waits for your approval.');
    expect(TestBed.inject(PendingActions).count()).toBe(0);
  });

  it('edits the arguments field by field, shows the change before saving, and sends the whole arguments', async () => {
    await show([pendingAction('a1')]);
    await click('edit-action');
    const textField = el<HTMLTextAreaElement>('action-field-text');
    expect(textField?.tagName).toBe('TEXTAREA');
    expect(textField?.value).toBe('Here are the notes');
    expect(document.activeElement).toBe(el('action-field-to'));
    expect(text('action-changes')).toBe('Nothing changed yet.');
    expect(el<HTMLButtonElement>('save-action')?.disabled).toBe(true);

    await type('action-field-text', 'Here are the public notes');
    expect(texts('action-change')).toEqual([
      'text: was Here are the notes becomes Here are the public notes',
    ]);
    expect(text('action-change-before')).toBe('Here are the notes');
    expect(text('action-change-after')).toBe('Here are the public notes');

    await click('save-action');
    const req = http.expectOne('/api/actions/a1');
    expect(req.request.method).toBe('PATCH');
    expect(req.request.body).toEqual({
      arguments: { to: '+491701234567', text: 'Here are the public notes' },
    });
    req.flush(
      pendingAction('a1', {
        arguments: { to: '+491701234567', text: 'Here are the public notes' },
        summary: 'Send “Here are the public notes” to Anna',
      }),
    );
    await stable();
    expect(el('action-edit-form')).toBeNull();
    expect(text('action-summary')).toBe(
      'Send “Here are the public notes” to Anna',
    );
    expect(document.activeElement).toBe(el('edit-action'));
  });

  it('edits any argument as JSON, refuses text that is not an object, and shows the tool’s refusal', async () => {
    await show([
      pendingAction('a1', {
        tool: 'email_actions',
        arguments: {
          action: 'send',
          to: ['ann@example.net'],
          subject: 'Notes',
          text: 'Hi',
          attach: { path: 'notes.md' },
        },
      }),
    ]);
    expect(text('action-title')).toBe('Send an email');
    await click('edit-action');
    // The address list is one line, separated by commas.
    expect(el<HTMLInputElement>('action-field-to')?.value).toBe(
      'ann@example.net',
    );
    await type('action-field-to', 'ann@example.net, bob@example.net');
    await click('action-json-toggle');
    const json = el<HTMLTextAreaElement>('action-json-input');
    expect(JSON.parse(json?.value ?? '')).toEqual({
      action: 'send',
      to: ['ann@example.net', 'bob@example.net'],
      subject: 'Notes',
      text: 'Hi',
      attach: { path: 'notes.md' },
    });

    await type('action-json-input', '[1, 2]');
    expect(text('action-json-error')).toBe('Not a JSON object.');
    expect(el<HTMLButtonElement>('save-action')?.disabled).toBe(true);

    await type(
      'action-json-input',
      JSON.stringify({
        action: 'send',
        to: ['x'],
        subject: 'Notes',
        text: 'Hi',
      }),
    );
    expect(texts('action-change')).toEqual([
      'to: was ["ann@example.net"] becomes ["x"]',
      'attach: was {"path":"notes.md"} becomes (none)',
    ]);
    await click('save-action');
    http.expectOne('/api/actions/a1').flush(
      {
        statusCode: 400,
        message: 'to: "x" is not an email address',
        error: 'Bad Request',
      },
      { status: 400, statusText: 'Bad Request' },
    );
    await stable();
    expect(text('action-error')).toBe('to: "x" is not an email address');
    expect(el('action-edit-form')).not.toBeNull();

    await click('cancel-edit-action');
    expect(el('action-edit-form')).toBeNull();
  });
});

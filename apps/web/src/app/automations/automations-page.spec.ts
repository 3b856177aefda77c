import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type { CronJobView, CronPreview } from '@metatronos/shared-types';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import { TZ, cronJob, cronRun, pulseView } from '../testing/automation-data';
import type { FakeEventStream } from '../testing/fake-event-stream';
import { AutomationsPage } from './automations-page';
import { PREVIEW_DEBOUNCE_MS } from './cron-job-form';

const MORNING = cronJob('j1', 'Morning briefing', {
  lastRun: cronRun('r0', { finishedAt: '2026-11-20T07:00:13.000Z' }),
});
const WEEKLY = cronJob('j2', 'Weekly review', {
  cronExpression: '0 9 * * 1',
  description: 'At 09:00, only on Monday',
  enabled: false,
  nextRuns: [],
});
const BROKEN = cronJob('j3', 'Broken', {
  cronExpression: '61 * * * *',
  description: '',
  nextRuns: [],
  scheduleError: 'Minute 61 is out of range (0-59)',
  consecutiveFailures: 3,
  failing: true,
  lastRun: cronRun('r9', {
    jobId: 'j3',
    outcome: 'error',
    error: 'boom',
    finishedAt: '2026-11-21T10:15:00.000Z',
  }),
});

const VALID_PREVIEW: CronPreview = {
  valid: true,
  error: null,
  description: 'At 08:00, Monday through Friday',
  nextRuns: [
    '2026-11-23T07:00:00.000Z',
    '2026-11-24T07:00:00.000Z',
    '2026-11-25T07:00:00.000Z',
  ],
  timezone: TZ,
};

/** Only rxjs' timers (setInterval and its clock) are fake: the debounce is under the test's control, Angular's scheduling is not. */
function fakeRxjsTimers(): void {
  jest.useFakeTimers({
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'requestAnimationFrame',
      'cancelAnimationFrame',
      'requestIdleCallback',
      'cancelIdleCallback',
      'setImmediate',
      'clearImmediate',
      'setTimeout',
      'clearTimeout',
    ],
  });
}

describe('AutomationsPage', () => {
  let fixture: ComponentFixture<AutomationsPage>;
  let http: HttpTestingController;
  let events: FakeEventStream;

  const root = () => fixture.nativeElement as HTMLElement;
  const { el, all, text, texts } = testIdQueries(root);
  const job = (id: string) =>
    all('job-item').find((node) => node.dataset['jobId'] === id) as HTMLElement;
  const button = (testId: string, scope: ParentNode = root()) =>
    el<HTMLButtonElement>(testId, scope) as HTMLButtonElement;
  const stable = () => fixture.whenStable();
  const isPreview = (req: { url: string }) =>
    req.url === '/api/cronjobs/preview';

  function type(testId: string, value: string): void {
    const field = el<HTMLInputElement>(testId) as HTMLInputElement;
    field.value = value;
    field.dispatchEvent(new Event('input'));
  }

  async function load(
    jobs: CronJobView[] = [MORNING, WEEKLY, BROKEN],
  ): Promise<void> {
    fixture = TestBed.createComponent(AutomationsPage);
    await stable();
    http.expectOne('/api/cronjobs').flush(jobs);
    http.expectOne('/api/pulse').flush(pulseView());
    http.expectOne('/api/pulse/runs?limit=5').flush([]);
    await stable();
  }

  /** Lets the debounce pass and answers the one preview request it makes. */
  async function answerPreview(
    expression: string,
    preview: CronPreview = VALID_PREVIEW,
  ): Promise<void> {
    jest.advanceTimersByTime(PREVIEW_DEBOUNCE_MS);
    const req = http.expectOne(isPreview);
    expect(req.request.params.get('cronExpression')).toBe(expression);
    req.flush(preview);
    await stable();
  }

  beforeEach(() => {
    ({ http, events } = setUpApiTest(AutomationsPage));
  });

  afterEach(() => {
    // The Pulse card and the job form ask for the modes.
    for (const req of http.match('/api/tools'))
      req.flush({ modes: [], meta: [] });
    tearDownApiTest(http);
    jest.useRealTimers();
  });

  it('lists the jobs in creation order with their schedule, next runs in the owner’s zone, state and last run', async () => {
    await load();
    expect(texts('job-name')).toEqual([
      'Morning briefing',
      'Weekly review',
      'Broken',
    ]);

    const morning = job('j1');
    expect(text('job-description', morning)).toBe(
      'At 08:00, Monday through Friday',
    );
    expect(text('job-expression', morning)).toBe('0 8 * * 1-5');
    expect(el('job-expression', morning)?.tagName).toBe('CODE');
    expect(texts('job-next-run', morning)).toEqual([
      'Mon 23 Nov, 08:00',
      'Tue 24 Nov, 08:00',
      'Wed 25 Nov, 08:00',
    ]);
    expect(text('job-state', morning)).toBe('Active');
    expect(el('job-last-run', morning)?.dataset['outcome']).toBe('success');
    expect(text('job-last-run-outcome', morning)).toBe('Success');
    expect(text('job-last-run-time', morning)).toBe('Fri 20 Nov, 08:00');
    expect(el('job-chat-link', morning)?.getAttribute('href')).toBe(
      '/chat/chat-j1',
    );
    expect(el('job-failing', morning)).toBeNull();
    expect(el('job-schedule-error', morning)).toBeNull();
    expect(el('pause-job', morning)).not.toBeNull();

    const weekly = job('j2');
    expect(text('job-state', weekly)).toBe('Paused');
    expect(text('job-next-runs', weekly)).toBe('None while paused');
    expect(text('job-last-run', weekly)).toBe('Never');
    expect(el('resume-job', weekly)).not.toBeNull();

    const broken = job('j3');
    expect(text('job-failing', broken)).toBe('Failed 3 times in a row');
    expect(text('job-schedule-error', broken)).toBe(
      "Can't be scheduled: Minute 61 is out of range (0-59)",
    );
    expect(text('job-next-runs', broken)).toBe('None: the schedule is broken');
    expect(el('job-last-run', broken)?.dataset['outcome']).toBe('error');
    expect(text('job-last-run-outcome', broken)).toBe('Error');
    expect(text('job-last-run-time', broken)).toBe('Sat 21 Nov, 11:15');
    expect(text('job-last-run-detail', broken)).toBe('boom');
    expect(el('job-last-run-detail', morning)).toBeNull();
    expect(el('no-jobs')).toBeNull();
  });

  it('explains jobs when there are none, and that Metatron can create them from a chat', async () => {
    await load([]);
    expect(text('no-jobs')).toContain('No scheduled jobs yet.');
    expect(text('no-jobs')).toContain(
      '“every weekday at 8:00 summarise my schedule”',
    );
    expect(el('job-list')).toBeNull();
  });

  it('shows a mail watch that started watching while the event stream was not open, once the stream opens', async () => {
    const mailJob = cronJob('j9', 'Triage', {
      cronExpression: null,
      mailTrigger: {
        accountId: 'a1',
        folder: 'INBOX',
        address: 'me@work.test',
      },
      mailWatch: { state: 'connecting', reason: null },
      nextRuns: [],
    });
    events.setState('connecting');
    await load([mailJob]);
    const watch = () =>
      el('job-mail-watch', job('j9'))?.getAttribute('data-state');
    expect(watch()).toBe('connecting');
    // Its cronjobs.changed went out before the stream opened: the open itself brings the news.
    events.setState('open');
    http
      .expectOne('/api/cronjobs')
      .flush([{ ...mailJob, mailWatch: { state: 'watching', reason: null } }]);
    // The Pulse card follows its events the same way.
    http.expectOne('/api/pulse').flush(pulseView());
    await stable();
    expect(watch()).toBe('watching');
  });

  it('pauses and resumes a job', async () => {
    await load();
    button('pause-job', job('j1')).click();
    await stable();
    let req = http.expectOne('/api/cronjobs/j1');
    expect(req.request.method).toBe('PATCH');
    expect(req.request.body).toEqual({ enabled: false });
    req.flush({ ...MORNING, enabled: false, nextRuns: [] });
    await stable();
    expect(text('job-state', job('j1'))).toBe('Paused');
    expect(text('job-next-runs', job('j1'))).toBe('None while paused');

    button('resume-job', job('j1')).click();
    await stable();
    req = http.expectOne('/api/cronjobs/j1');
    expect(req.request.body).toEqual({ enabled: true });
    req.flush(MORNING);
    await stable();
    expect(text('job-state', job('j1'))).toBe('Active');
    expect(texts('job-next-run', job('j1'))).toHaveLength(3);
  });

  it('runs a job now, and shows why the server refused', async () => {
    await load();
    button('run-job', job('j1')).click();
    await stable();
    const req = http.expectOne('/api/cronjobs/j1/run');
    expect(req.request.method).toBe('POST');
    req.flush(
      cronRun('r1', {
        trigger: 'manual',
        outcome: 'running',
        finishedAt: null,
        durationMs: null,
      }),
      { status: 202, statusText: 'Accepted' },
    );
    await stable();
    expect(text('job-running', job('j1'))).toBe('Running');
    expect(button('run-job', job('j1')).disabled).toBe(true);
    expect(
      document.querySelector('mat-snack-bar-container')?.textContent,
    ).toContain('“Morning briefing” is running.');

    button('run-job', job('j2')).click();
    await stable();
    http.expectOne('/api/cronjobs/j2/run').flush(
      {
        statusCode: 409,
        message: 'Weekly review is already running.',
        error: 'Conflict',
      },
      { status: 409, statusText: 'Conflict' },
    );
    await stable();
    expect(text('job-error', job('j2'))).toBe(
      'Weekly review is already running.',
    );
    // A 409 means a run is under way (a click elsewhere, or the schedule): the card shows it.
    expect(text('job-running', job('j2'))).toBe('Running');
  });

  it('does not mark a quick run as running when its end arrived before the answer to Run now', async () => {
    await load();
    button('toggle-history', job('j1')).click();
    await stable();
    http.expectOne('/api/cronjobs/j1/runs?limit=20').flush([]);
    button('run-job', job('j1')).click();
    await stable();
    const req = http.expectOne('/api/cronjobs/j1/run');
    const done = cronRun('r7', {
      trigger: 'manual',
      outcome: 'success',
      startedAt: '2026-11-23T09:00:00.000Z',
      durationMs: 300,
    });
    events.emit('automation.run', {
      run: done,
      at: '2026-11-23T09:00:00.300Z',
    });
    await stable();
    http.expectOne('/api/cronjobs/j1').flush({ ...MORNING, lastRun: done });
    await stable();
    req.flush(
      { ...done, outcome: 'running', finishedAt: null, durationMs: null },
      { status: 202, statusText: 'Accepted' },
    );
    await stable();
    expect(el('job-running', job('j1'))).toBeNull();
    expect(text('job-last-run-outcome', job('j1'))).toBe('Success');
    expect(texts('run-outcome', job('j1'))).toEqual(['Success']);
  });

  it('deletes a job only after a confirmation that says its chat goes too', async () => {
    await load();
    button('delete-job', job('j1')).click();
    await stable();
    http.expectNone('/api/cronjobs/j1');
    expect(text('delete-job-confirm', job('j1'))).toContain(
      'Delete “Morning briefing”? Its chat and its run history are deleted too.',
    );
    expect(document.activeElement).toBe(el('cancel-delete-job', job('j1')));

    button('cancel-delete-job', job('j1')).click();
    await stable();
    expect(el('delete-job-confirm', job('j1'))).toBeNull();

    // Escape cancels too, focus back on Delete.
    button('delete-job', job('j1')).click();
    await stable();
    document.activeElement?.dispatchEvent(
      new KeyboardEvent('keydown', {
        key: 'Escape',
        bubbles: true,
        cancelable: true,
      }),
    );
    await stable();
    expect(el('delete-job-confirm', job('j1'))).toBeNull();
    expect(document.activeElement).toBe(el('delete-job', job('j1')));
    http.expectNone('/api/cronjobs/j1');

    button('delete-job', job('j1')).click();
    await stable();
    button('confirm-delete-job', job('j1')).click();
    await stable();
    const req = http.expectOne('/api/cronjobs/j1');
    expect(req.request.method).toBe('DELETE');
    req.flush(null, { status: 204, statusText: 'No Content' });
    await stable();
    expect(texts('job-name')).toEqual(['Weekly review', 'Broken']);
    expect(
      document.querySelector('mat-snack-bar-container')?.textContent,
    ).toContain('Deleted “Morning briefing”.');
  });

  it('labels who made each job, and deletes a malformed stored job shown with its scheduleError', async () => {
    const stored = cronJob('legacy job/1', 'Untitled job', {
      cronExpression: '',
      description: '',
      nextRuns: [],
      chatId: null,
      createdBy: null,
      scheduleError:
        'This job was stored in a shape the scheduler cannot run (its id is not an ObjectId). Delete it and create it again.',
    });
    await load([MORNING, { ...WEEKLY, createdBy: 'ai' }, stored]);
    expect(texts('job-created-by')).toEqual(['By you', 'By AI']);
    expect(el('job-created-by', job('j2'))?.dataset['createdBy']).toBe('ai');
    const broken = job('legacy job/1');
    expect(el('job-created-by', broken)).toBeNull();
    expect(text('job-schedule-error', broken)).toContain(
      'Delete it and create it again.',
    );
    button('delete-job', broken).click();
    await stable();
    button('confirm-delete-job', broken).click();
    await stable();
    const req = http.expectOne('/api/cronjobs/legacy%20job%2F1');
    expect(req.request.method).toBe('DELETE');
    req.flush(null, { status: 204, statusText: 'No Content' });
    await stable();
    expect(texts('job-name')).toEqual(['Morning briefing', 'Weekly review']);
  });

  it('expands the run history with trigger, duration, outcome, reason and the run’s chat', async () => {
    await load();
    const toggle = button('toggle-history', job('j1'));
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    expect(el('job-history', job('j1'))).toBeNull();
    toggle.click();
    await stable();
    http.expectOne('/api/cronjobs/j1/runs?limit=20').flush([
      cronRun('r4', {
        trigger: 'manual',
        dueAt: null,
        startedAt: '2026-11-22T17:45:00.000Z',
        durationMs: 850,
        chatId: 'chat-j1',
      }),
      cronRun('r3', {
        outcome: 'error',
        error: 'Model quota exceeded',
        startedAt: '2026-11-21T07:00:00.000Z',
        durationMs: 125_000,
      }),
      cronRun('r2', {
        outcome: 'skipped',
        reason: 'busy',
        startedAt: '2026-11-20T07:00:00.000Z',
        durationMs: 0,
        chatId: null,
        messageId: null,
      }),
      cronRun('r1', {
        trigger: 'catch-up',
        outcome: 'missed',
        reason: '2',
        startedAt: '2026-11-19T06:59:00.000Z',
        durationMs: null,
        chatId: null,
      }),
    ]);
    await stable();
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    const history = el('job-history', job('j1')) as HTMLElement;
    expect(toggle.getAttribute('aria-controls')).toBe(history.id);
    expect(texts('run-outcome', history)).toEqual([
      'Success',
      'Error',
      'Skipped',
      'Missed',
    ]);
    expect(texts('run-trigger', history)).toEqual([
      'Manual',
      'Scheduled',
      'Scheduled',
      'Catch-up',
    ]);
    expect(texts('run-started', history)).toEqual([
      'Sun 22 Nov, 18:45',
      'Sat 21 Nov, 08:00',
      'Fri 20 Nov, 08:00',
      'Thu 19 Nov, 07:59',
    ]);
    expect(texts('run-duration', history)).toEqual([
      '850 ms',
      '2 min 5 s',
      '0 ms',
    ]);
    expect(texts('run-detail', history)).toEqual([
      'Model quota exceeded',
      'Skipped: the previous run was still going.',
      '2 runs were missed while MetatronOS was off.',
    ]);
    expect(
      all('run-chat-link', history).map((link) => link.getAttribute('href')),
    ).toEqual(['/chat/chat-j1', '/chat/chat-j1']);

    toggle.click();
    await stable();
    expect(el('job-history', job('j1'))).toBeNull();
  });

  it('follows runs live: running flag, last run, the open history, then the server’s view of the job', async () => {
    await load();
    button('toggle-history', job('j1')).click();
    await stable();
    http.expectOne('/api/cronjobs/j1/runs?limit=20').flush([]);
    await stable();
    expect(text('no-runs', job('j1'))).toBe(
      'No runs yet. Use Run now to try the job.',
    );

    const started = cronRun('r5', {
      outcome: 'running',
      startedAt: '2026-11-23T07:00:00.000Z',
      finishedAt: null,
      durationMs: null,
    });
    events.emit('automation.run', { run: started, at: started.startedAt });
    await stable();
    expect(text('job-running', job('j1'))).toBe('Running');
    expect(texts('run-outcome', job('j1'))).toEqual(['Running']);
    expect(texts('run-duration', job('j1'))).toEqual(['running…']);
    http.expectOne('/api/cronjobs/j1').flush({ ...MORNING, running: true });
    await stable();

    const finished = {
      ...started,
      outcome: 'success' as const,
      finishedAt: '2026-11-23T07:00:09.000Z',
      durationMs: 9_000,
    };
    events.emit('automation.run', { run: finished, at: finished.finishedAt });
    await stable();
    expect(el('job-running', job('j1'))).toBeNull();
    expect(texts('run-outcome', job('j1'))).toEqual(['Success']);
    expect(texts('run-duration', job('j1'))).toEqual(['9 s']);
    expect(text('job-last-run-outcome', job('j1'))).toBe('Success');
    expect(text('job-last-run-time', job('j1'))).toBe('Mon 23 Nov, 08:00');
    http.expectOne('/api/cronjobs/j1').flush({
      ...MORNING,
      lastRun: finished,
      nextRuns: ['2026-11-24T07:00:00.000Z'],
    });
    await stable();
    expect(texts('job-next-run', job('j1'))).toEqual(['Tue 24 Nov, 08:00']);

    // A pulse or another app's job is not this list's business.
    events.emit('automation.run', {
      run: cronRun('p1', { kind: 'pulse', jobId: null }),
      at: '2026-11-23T08:00:00.000Z',
    });
    await stable();
    http.expectOne('/api/pulse').flush(pulseView());
    http.expectOne('/api/pulse/runs?limit=5').flush([]);
    http.expectNone((req) => req.url.startsWith('/api/cronjobs'));
  });

  it('reloads the list when jobs change elsewhere (e.g. Metatron created one from a chat)', async () => {
    await load([MORNING]);
    events.emit('cronjobs.changed', {
      jobId: 'j9',
      change: 'created',
      by: 'ai',
      at: '2026-11-23T08:00:00.000Z',
    });
    await stable();
    http
      .expectOne('/api/cronjobs')
      .flush([MORNING, cronJob('j9', 'Water the plants')]);
    await stable();
    expect(texts('job-name')).toEqual(['Morning briefing', 'Water the plants']);
  });

  describe('the job form', () => {
    beforeEach(() => fakeRxjsTimers());

    /** The form asks for the modes a job can start in. */
    async function answerModes(): Promise<void> {
      for (const req of http.match('/api/tools'))
        req.flush({
          modes: [
            {
              name: 'default',
              description: 'Everyday',
              accountKind: null,
              tools: [],
            },
            {
              name: 'web',
              description: 'Web search and fetch',
              accountKind: null,
              tools: [],
            },
          ],
          meta: [],
        });
      await stable();
    }

    async function openNew(jobs: CronJobView[] = [MORNING]): Promise<void> {
      await load(jobs);
      el('new-job')?.click();
      await stable();
      await answerModes();
    }

    it('creates a job with a debounced live preview of the schedule', async () => {
      await openNew();
      expect(text('job-form')).toContain('New scheduled job');
      expect(document.activeElement).toBe(el('job-name-input'));
      expect(button('save-job').disabled).toBe(true);

      type('job-name-input', 'Daily digest');
      type('job-instruction-input', 'Summarise my schedule');
      await stable();
      expect(text('job-instruction-counter')).toBe('21 / 10000');
      type('job-expression-input', '0 8 * * 1');
      jest.advanceTimersByTime(100);
      type('job-expression-input', '0 8 * * 1-5');
      jest.advanceTimersByTime(PREVIEW_DEBOUNCE_MS - 1);
      http.expectNone(isPreview);
      jest.advanceTimersByTime(1);
      // Only what was typed last is asked for.
      const req = http.expectOne(isPreview);
      expect(req.request.params.get('cronExpression')).toBe('0 8 * * 1-5');
      req.flush(VALID_PREVIEW);
      await stable();
      expect(text('job-preview-description')).toBe(
        'At 08:00, Monday through Friday',
      );
      expect(texts('job-preview-run')).toEqual([
        'Mon 23 Nov, 08:00',
        'Tue 24 Nov, 08:00',
        'Wed 25 Nov, 08:00',
      ]);
      expect(button('save-job').disabled).toBe(false);
      // The mode the runs start in: the tools the instruction needs.
      const mode = el<HTMLSelectElement>('job-mode-input') as HTMLSelectElement;
      expect(mode.value).toBe('default');
      mode.value = 'web';
      mode.dispatchEvent(new Event('change'));
      await stable();

      button('save-job').click();
      await stable();
      const create = http.expectOne('/api/cronjobs');
      expect(create.request.method).toBe('POST');
      expect(create.request.body).toEqual({
        name: 'Daily digest',
        instruction: 'Summarise my schedule',
        cronExpression: '0 8 * * 1-5',
        mode: 'web',
        enabled: true,
      });
      create.flush(cronJob('j2', 'Daily digest'), {
        status: 201,
        statusText: 'Created',
      });
      await stable();
      expect(el('job-form')).toBeNull();
      expect(texts('job-name')).toEqual(['Morning briefing', 'Daily digest']);
      expect(
        document.querySelector('mat-snack-bar-container')?.textContent,
      ).toContain('Created “Daily digest”.');
    });

    it('shows an invalid expression in red and keeps Save disabled', async () => {
      await openNew();
      type('job-name-input', 'Oops');
      type('job-instruction-input', 'Something');
      type('job-expression-input', '0 25 * * *');
      await answerPreview('0 25 * * *', {
        valid: false,
        error: 'Hour 25 is out of range (0-23)',
        description: null,
        nextRuns: [],
        timezone: TZ,
      });
      expect(text('job-preview-error')).toBe('Hour 25 is out of range (0-23)');
      expect(el('job-preview-description')).toBeNull();
      expect(el('job-expression-input')?.getAttribute('aria-invalid')).toBe(
        'true',
      );
      expect(button('save-job').disabled).toBe(true);

      // While the next answer is on its way Save stays disabled too.
      type('job-expression-input', '0 23 * * *');
      await stable();
      expect(el('job-preview')?.classList).toContain('stale');
      expect(button('save-job').disabled).toBe(true);
      await answerPreview('0 23 * * *', {
        ...VALID_PREVIEW,
        description: 'At 23:00',
      });
      expect(text('job-preview-description')).toBe('At 23:00');
      expect(button('save-job').disabled).toBe(false);
    });

    it('fills the expression from a preset', async () => {
      await openNew();
      const preset = all('job-preset').find(
        (node) => node.dataset['expression'] === '30 7 * * *',
      ) as HTMLButtonElement;
      expect(preset.textContent?.trim()).toBe('Every day at 07:30');
      preset.click();
      await stable();
      expect(el<HTMLInputElement>('job-expression-input')?.value).toBe(
        '30 7 * * *',
      );
      expect(preset.getAttribute('aria-pressed')).toBe('true');
      await answerPreview('30 7 * * *', {
        ...VALID_PREVIEW,
        description: 'At 07:30',
      });
      expect(text('job-preview-description')).toBe('At 07:30');
      expect(
        all('job-preset').map((node) => node.dataset['expression']),
      ).toEqual(['0 8 * * 1-5', '30 7 * * *', '0 9 * * 1', '0 * * * *']);
    });

    it('keeps everything typed and shows the server’s 400 message', async () => {
      await openNew();
      type('job-name-input', 'Morning briefing');
      type('job-instruction-input', 'Again');
      type('job-expression-input', '0 8 * * 1-5');
      await answerPreview('0 8 * * 1-5');
      el('job-enabled-input')?.querySelector('input')?.click();
      await stable();
      button('save-job').click();
      await stable();
      const req = http.expectOne('/api/cronjobs');
      expect(req.request.body).toEqual({
        name: 'Morning briefing',
        instruction: 'Again',
        cronExpression: '0 8 * * 1-5',
        mode: 'default',
        enabled: false,
      });
      req.flush(
        {
          statusCode: 400,
          message: ['A job named "Morning briefing" already exists'],
          error: 'Bad Request',
        },
        { status: 400, statusText: 'Bad Request' },
      );
      await stable();
      expect(text('job-form-error')).toBe(
        'A job named "Morning briefing" already exists',
      );
      expect(el<HTMLInputElement>('job-name-input')?.value).toBe(
        'Morning briefing',
      );
      expect(el<HTMLTextAreaElement>('job-instruction-input')?.value).toBe(
        'Again',
      );
      expect(el<HTMLInputElement>('job-expression-input')?.value).toBe(
        '0 8 * * 1-5',
      );
      expect(texts('job-name')).toEqual(['Morning briefing']);

      // Fixing it clears the message and allows another try.
      type('job-name-input', 'Morning briefing 2');
      await stable();
      expect(el('job-form-error')).toBeNull();
      expect(button('save-job').disabled).toBe(false);
    });

    it('edits a job and sends only what changed', async () => {
      await load([MORNING, WEEKLY]);
      button('edit-job', job('j2')).click();
      await stable();
      await answerModes();
      expect(text('job-form')).toContain('Edit “Weekly review”');
      expect(el<HTMLInputElement>('job-name-input')?.value).toBe(
        'Weekly review',
      );
      expect(el<HTMLTextAreaElement>('job-instruction-input')?.value).toBe(
        'Do Weekly review',
      );
      expect(el<HTMLInputElement>('job-expression-input')?.value).toBe(
        '0 9 * * 1',
      );
      expect(el('job-enabled-input')).toBeNull();
      await answerPreview('0 9 * * 1', {
        ...VALID_PREVIEW,
        description: 'At 09:00, only on Monday',
      });
      expect(button('save-job').disabled).toBe(true);

      type('job-instruction-input', 'Review my week and plan the next one');
      await stable();
      button('save-job').click();
      await stable();
      const req = http.expectOne('/api/cronjobs/j2');
      expect(req.request.method).toBe('PATCH');
      expect(req.request.body).toEqual({
        instruction: 'Review my week and plan the next one',
      });
      req.flush({
        ...WEEKLY,
        instruction: 'Review my week and plan the next one',
      });
      await stable();
      expect(el('job-form')).toBeNull();
      expect(text('job-instruction', job('j2'))).toBe(
        'Review my week and plan the next one',
      );
    });
  });
});

import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import {
  PULSE_NOTES_MAX_LENGTH,
  QUIET_HOURS_MAX_RANGES,
  type CronRunView,
  type PulseView,
} from '@metatronos/shared-types';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import { cronRun, pulseView } from '../testing/automation-data';
import type { FakeEventStream } from '../testing/fake-event-stream';
import { PulseCard } from './pulse-card';

const PULSE_RUNS: CronRunView[] = [
  cronRun('p2', {
    kind: 'pulse',
    jobId: null,
    startedAt: '2026-11-23T07:00:00.000Z',
    durationMs: 4_000,
    chatId: 'pulse-chat',
  }),
  cronRun('p1', {
    kind: 'pulse',
    jobId: null,
    outcome: 'skipped',
    reason: 'busy',
    startedAt: '2026-11-23T05:00:00.000Z',
    chatId: null,
  }),
];

describe('PulseCard', () => {
  let fixture: ComponentFixture<PulseCard>;
  let http: HttpTestingController;
  let events: FakeEventStream;

  const root = () => fixture.nativeElement as HTMLElement;
  const { el, all, text, texts } = testIdQueries(root);
  const day = (n: number) =>
    all('pulse-day').find(
      (node) => node.dataset['day'] === String(n),
    ) as HTMLButtonElement;
  const pressedDays = () =>
    all('pulse-day')
      .filter((node) => node.getAttribute('aria-pressed') === 'true')
      .map((node) => node.textContent?.trim());
  const rows = () => all('quiet-hours-row');
  const saveButton = () =>
    el<HTMLButtonElement>('save-pulse') as HTMLButtonElement;
  const stable = () => fixture.whenStable();

  function type(
    field: HTMLInputElement | HTMLTextAreaElement | null,
    value: string,
  ): void {
    if (!field) throw new Error('no such field');
    field.value = value;
    field.dispatchEvent(new Event('input'));
  }

  async function load(
    view: PulseView = pulseView(),
    runs: CronRunView[] = PULSE_RUNS,
  ): Promise<void> {
    fixture = TestBed.createComponent(PulseCard);
    await stable();
    http.expectOne('/api/pulse').flush(view);
    http.expectOne('/api/pulse/runs?limit=5').flush(runs);
    // The modes a pulse can start in.
    http.expectOne('/api/tools').flush({
      modes: [
        {
          name: 'default',
          description: 'Everyday',
          accountKind: null,
          tools: [],
        },
        {
          name: 'automations',
          description: 'Jobs and Pulse',
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

  beforeEach(() => {
    ({ http, events } = setUpApiTest(PulseCard));
  });

  afterEach(() => {
    for (const req of http.match('/api/tools'))
      req.flush({ modes: [], meta: [] });
    tearDownApiTest(http);
  });

  it('shows the settings, and the server’s figures in the owner’s time zone', async () => {
    await load();
    expect(
      el('pulse-enabled-toggle')
        ?.querySelector('button')
        ?.getAttribute('aria-checked'),
    ).toBe('true');
    expect(pressedDays()).toEqual(['Mon', 'Tue', 'Wed', 'Thu', 'Fri']);
    expect(day(0).getAttribute('aria-label')).toBe('Sunday');
    const perDay = el<HTMLSelectElement>('pulse-per-day') as HTMLSelectElement;
    expect(perDay.value).toBe('12');
    expect(
      Array.from(perDay.options).map((option) => option.textContent?.trim()),
    ).toEqual([
      '48 a day · every 30 min',
      '24 a day · every hour',
      '12 a day · every 2 h',
      '6 a day · every 4 h',
      '2 a day · every 12 h',
    ]);
    expect(rows()).toHaveLength(1);
    expect(el<HTMLInputElement>('quiet-hours-start')?.value).toBe('22:00');
    expect(el<HTMLInputElement>('quiet-hours-end')?.value).toBe('07:00');
    expect(text('quiet-hours-midnight')).toBe('crosses midnight');
    expect(el<HTMLTextAreaElement>('pulse-notes-input')?.value).toBe(
      'Check the garden.',
    );
    expect(text('pulse-notes-counter')).toBe(`17 / ${PULSE_NOTES_MAX_LENGTH}`);

    expect(text('pulse-next')).toBe('Mon 23 Nov, 10:00');
    expect(el('pulse-next-reason')).toBeNull();
    expect(text('pulse-remaining')).toBe('5');
    expect(text('pulse-today')).toBe('3');
    expect(text('pulse-last')).toBe('Mon 23 Nov, 08:00');
    expect(text('pulse-interval')).toBe('every 2 h');
    expect(el('pulse-chat-link')?.getAttribute('href')).toBe(
      '/chat/pulse-chat',
    );
    expect(el('pulse-running')).toBeNull();

    expect(texts('run-outcome')).toEqual(['Success', 'Skipped']);
    expect(texts('run-started')).toEqual([
      'Mon 23 Nov, 08:00',
      'Mon 23 Nov, 06:00',
    ]);
    expect(
      all('run-chat-link').map((link) => link.getAttribute('href')),
    ).toEqual(['/chat/pulse-chat']);
    expect(saveButton().disabled).toBe(true);
  });

  it('says why there is no next pulse', async () => {
    await load(
      pulseView({
        enabled: false,
        nextPulseAt: null,
        remaining: 0,
        lastPulseAt: null,
        chatId: null,
      }),
      [],
    );
    expect(text('pulse-next')).toBe('—');
    expect(text('pulse-next-reason')).toBe('Pulse is off');
    expect(text('pulse-last')).toBe('Never');
    expect(el('pulse-chat-link')).toBeNull();
    expect(text('no-runs')).toBe('No pulses yet.');

    events.emit('pulse.updated', {
      by: 'owner',
      at: '2026-11-23T08:00:00.000Z',
    });
    await stable();
    http
      .expectOne('/api/pulse')
      .flush(pulseView({ activeDays: [], nextPulseAt: null }));
    await stable();
    expect(text('pulse-next')).toBe('—');
    expect(text('pulse-next-reason')).toBe('no active days');
    expect(pressedDays()).toEqual([]);
  });

  it('edits days, pulses per day, quiet hours and notes, and saves only what changed', async () => {
    await load();
    day(1).click();
    day(0).click();
    const perDay = el<HTMLSelectElement>('pulse-per-day') as HTMLSelectElement;
    perDay.value = '48';
    perDay.dispatchEvent(new Event('change'));
    const mode = el<HTMLSelectElement>('pulse-mode') as HTMLSelectElement;
    expect(mode.value).toBe('automations');
    mode.value = 'web';
    mode.dispatchEvent(new Event('change'));
    el('add-quiet-hours')?.click();
    await stable();
    expect(pressedDays()).toEqual(['Sun', 'Tue', 'Wed', 'Thu', 'Fri']);
    expect(rows()).toHaveLength(2);
    type(el<HTMLInputElement>('quiet-hours-start', rows()[1]), '12:00');
    type(el<HTMLInputElement>('quiet-hours-end', rows()[1]), '14:00');
    type(
      el<HTMLTextAreaElement>('pulse-notes-input'),
      'Check the garden. Water the tomatoes.',
    );
    await stable();
    expect(el('quiet-hours-midnight', rows()[0])).not.toBeNull();
    expect(el('quiet-hours-midnight', rows()[1])).toBeNull();
    expect(text('pulse-notes-counter')).toBe(`37 / ${PULSE_NOTES_MAX_LENGTH}`);
    expect(text('pulse-unsaved')).toBe('Unsaved changes');

    saveButton().click();
    await stable();
    const req = http.expectOne('/api/pulse');
    expect(req.request.method).toBe('PATCH');
    expect(req.request.body).toEqual({
      activeDays: [0, 2, 3, 4, 5],
      pulsesPerDay: 48,
      quietHours: [
        { start: '22:00', end: '07:00' },
        { start: '12:00', end: '14:00' },
      ],
      notes: 'Check the garden. Water the tomatoes.',
      mode: 'web',
    });
    req.flush(
      pulseView({
        activeDays: [0, 2, 3, 4, 5],
        pulsesPerDay: 48,
        intervalMinutes: 30,
        nextPulseAt: '2026-11-23T07:30:00.000Z',
        quietHours: req.request.body.quietHours,
        notes: 'Check the garden. Water the tomatoes.',
      }),
    );
    await stable();
    expect(
      document.querySelector('mat-snack-bar-container')?.textContent,
    ).toContain('Pulse settings saved.');
    expect(el('pulse-unsaved')).toBeNull();
    expect(saveButton().disabled).toBe(true);
    expect(text('pulse-interval')).toBe('every 30 min');
    expect(text('pulse-next')).toBe('Mon 23 Nov, 08:30');
  });

  it('turns the Pulse off with the switch', async () => {
    await load();
    el('pulse-enabled-toggle')?.querySelector('button')?.click();
    await stable();
    saveButton().click();
    await stable();
    const req = http.expectOne('/api/pulse');
    expect(req.request.body).toEqual({ enabled: false });
    req.flush(pulseView({ enabled: false, nextPulseAt: null }));
    await stable();
    expect(text('pulse-next-reason')).toBe('Pulse is off');
  });

  it('refuses quiet hours that start when they end, and more than the maximum of ranges', async () => {
    await load();
    type(el<HTMLInputElement>('quiet-hours-end'), '22:00');
    await stable();
    expect(text('quiet-hours-error')).toBe('Start and end must differ.');
    expect(el('quiet-hours-midnight')).toBeNull();
    expect(el('quiet-hours-end')?.getAttribute('aria-invalid')).toBe('true');
    expect(saveButton().disabled).toBe(true);

    el('remove-quiet-hours')?.click();
    await stable();
    expect(text('no-quiet-hours')).toContain('No quiet hours');
    expect(saveButton().disabled).toBe(false);

    for (let i = 0; i < QUIET_HOURS_MAX_RANGES; i++)
      el('add-quiet-hours')?.click();
    await stable();
    expect(rows()).toHaveLength(QUIET_HOURS_MAX_RANGES);
    expect(el<HTMLButtonElement>('add-quiet-hours')?.disabled).toBe(true);
    el('add-quiet-hours')?.click();
    await stable();
    expect(rows()).toHaveLength(QUIET_HOURS_MAX_RANGES);
  });

  it('counts the notes and blocks Save when they are too long', async () => {
    await load();
    type(
      el<HTMLTextAreaElement>('pulse-notes-input'),
      'x'.repeat(PULSE_NOTES_MAX_LENGTH + 4),
    );
    await stable();
    expect(text('pulse-notes-counter')).toBe(
      `${PULSE_NOTES_MAX_LENGTH + 4} / ${PULSE_NOTES_MAX_LENGTH}`,
    );
    expect(el('pulse-notes-counter')?.classList).toContain('over');
    expect(text('pulse-form-error')).toBe(
      'The notes are 4 characters too long.',
    );
    expect(saveButton().disabled).toBe(true);
  });

  it('follows the notes Metatron writes, but shows a notice instead of overwriting unsaved edits', async () => {
    await load();
    events.emit('pulse.updated', { by: 'ai', at: '2026-11-23T08:00:00.000Z' });
    await stable();
    http
      .expectOne('/api/pulse')
      .flush(pulseView({ notes: 'Garden watered.', pulsesToday: 4 }));
    await stable();
    expect(el<HTMLTextAreaElement>('pulse-notes-input')?.value).toBe(
      'Garden watered.',
    );
    expect(text('pulse-today')).toBe('4');
    expect(el('pulse-changed-elsewhere')).toBeNull();

    day(6).click();
    await stable();
    events.emit('pulse.updated', { by: 'ai', at: '2026-11-23T10:00:00.000Z' });
    await stable();
    http
      .expectOne('/api/pulse')
      .flush(pulseView({ notes: 'Call mum on Sunday.', pulsesToday: 5 }));
    await stable();
    expect(text('pulse-changed-elsewhere')).toContain(
      'Metatron updated its notes while you were editing.',
    );
    expect(el<HTMLTextAreaElement>('pulse-notes-input')?.value).toBe(
      'Garden watered.',
    );
    expect(pressedDays()).toEqual(['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']);
    // The figures follow anyway.
    expect(text('pulse-today')).toBe('5');

    // Saving sends only the owner's change, so it does not undo Metatron's notes.
    saveButton().click();
    await stable();
    const req = http.expectOne('/api/pulse');
    expect(req.request.body).toEqual({ activeDays: [1, 2, 3, 4, 5, 6] });
    req.flush(
      pulseView({
        activeDays: [1, 2, 3, 4, 5, 6],
        notes: 'Call mum on Sunday.',
      }),
    );
    await stable();
    expect(el('pulse-changed-elsewhere')).toBeNull();
    expect(el<HTMLTextAreaElement>('pulse-notes-input')?.value).toBe(
      'Call mum on Sunday.',
    );
  });

  it('reloads to drop edits when the settings changed elsewhere', async () => {
    await load();
    type(el<HTMLTextAreaElement>('pulse-notes-input'), 'my draft');
    await stable();
    events.emit('pulse.updated', {
      by: 'owner',
      at: '2026-11-23T08:00:00.000Z',
    });
    await stable();
    http
      .expectOne('/api/pulse')
      .flush(pulseView({ pulsesPerDay: 6, intervalMinutes: 240 }));
    await stable();
    expect(text('pulse-changed-elsewhere')).toContain(
      'The Pulse settings were changed somewhere else',
    );
    expect(el<HTMLSelectElement>('pulse-per-day')?.value).toBe('12');
    el('reload-pulse')?.click();
    await stable();
    expect(el('pulse-changed-elsewhere')).toBeNull();
    expect(el<HTMLSelectElement>('pulse-per-day')?.value).toBe('6');
    expect(el<HTMLTextAreaElement>('pulse-notes-input')?.value).toBe(
      'Check the garden.',
    );
    expect(el('pulse-unsaved')).toBeNull();
  });

  it('shows the 400 message of a refused save and keeps the edits', async () => {
    await load();
    type(el<HTMLTextAreaElement>('pulse-notes-input'), 'new notes');
    await stable();
    saveButton().click();
    await stable();
    http.expectOne('/api/pulse').flush(
      {
        statusCode: 400,
        message: ['quietHours.0.start must be HH:mm'],
        error: 'Bad Request',
      },
      { status: 400, statusText: 'Bad Request' },
    );
    await stable();
    expect(text('pulse-error')).toBe('quietHours.0.start must be HH:mm');
    expect(el<HTMLTextAreaElement>('pulse-notes-input')?.value).toBe(
      'new notes',
    );
    expect(text('pulse-unsaved')).toBe('Unsaved changes');
  });

  it('runs a pulse now, and shows why the server refused', async () => {
    await load();
    el('run-pulse')?.click();
    await stable();
    const req = http.expectOne('/api/pulse/run');
    expect(req.request.method).toBe('POST');
    req.flush(
      cronRun('p3', {
        kind: 'pulse',
        jobId: null,
        trigger: 'manual',
        outcome: 'running',
        startedAt: '2026-11-23T09:15:00.000Z',
      }),
      {
        status: 202,
        statusText: 'Accepted',
      },
    );
    await stable();
    expect(text('pulse-running')).toBe('Pulsing');
    expect(el<HTMLButtonElement>('run-pulse')?.disabled).toBe(true);
    expect(texts('run-outcome')).toEqual(['Running', 'Success', 'Skipped']);
    expect(
      document.querySelector('mat-snack-bar-container')?.textContent,
    ).toContain('Pulse started.');

    // It ended: the card reloads the pulse and its runs.
    events.emit('automation.run', {
      run: cronRun('p3', {
        kind: 'pulse',
        jobId: null,
        trigger: 'manual',
        outcome: 'success',
      }),
      at: '2026-11-23T09:16:00.000Z',
    });
    await stable();
    http.expectOne('/api/pulse').flush(pulseView({ pulsesToday: 4 }));
    http.expectOne('/api/pulse/runs?limit=5').flush(PULSE_RUNS);
    await stable();
    expect(el('pulse-running')).toBeNull();
    expect(text('pulse-today')).toBe('4');

    el('run-pulse')?.click();
    await stable();
    http.expectOne('/api/pulse/run').flush(
      {
        statusCode: 409,
        message: 'A pulse is already running.',
        error: 'Conflict',
      },
      { status: 409, statusText: 'Conflict' },
    );
    await stable();
    expect(text('pulse-run-error')).toBe('A pulse is already running.');
  });

  it('reloads when a pulse fires', async () => {
    await load();
    events.emit('pulse.fired', {
      runId: 'p4',
      chatId: 'pulse-chat',
      at: '2026-11-23T09:00:00.000Z',
    });
    await stable();
    http.expectOne('/api/pulse').flush(pulseView({ running: true }));
    http
      .expectOne('/api/pulse/runs?limit=5')
      .flush([
        cronRun('p4', { kind: 'pulse', jobId: null, outcome: 'running' }),
        ...PULSE_RUNS,
      ]);
    await stable();
    expect(text('pulse-running')).toBe('Pulsing');
    expect(texts('run-outcome')).toEqual(['Running', 'Success', 'Skipped']);
  });
});

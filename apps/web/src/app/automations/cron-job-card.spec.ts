import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type { CronJobView } from '@metatronos/shared-types';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import { cronJob } from '../testing/automation-data';
import { CronJobCard } from './cron-job-card';

const MAIL_JOB = cronJob('j7', 'Triage', {
  cronExpression: null,
  description: 'When new mail arrives in me@work.test · INBOX',
  nextRuns: [],
  mailTrigger: { accountId: 'a1', folder: 'INBOX', address: 'me@work.test' },
  mailWatch: { state: 'watching', reason: null },
});

describe('CronJobCard: mail-triggered jobs', () => {
  let fixture: ComponentFixture<CronJobCard>;
  let http: HttpTestingController;

  const root = () => fixture.nativeElement as HTMLElement;
  const { el, text } = testIdQueries(root);

  async function show(job: CronJobView): Promise<void> {
    fixture = TestBed.createComponent(CronJobCard);
    fixture.componentRef.setInput('job', job);
    await fixture.whenStable();
  }

  beforeEach(() => {
    ({ http } = setUpApiTest(CronJobCard));
  });
  afterEach(() => tearDownApiTest(http));

  it('says which mailbox and folder start the job, and that it is watching', async () => {
    await show(MAIL_JOB);
    expect(text('job-description')).toBe(
      'When mail arrives in me@work.test · INBOX',
    );
    expect(el('job-expression')).toBeNull();
    expect(el('job-next-runs')).toBeNull();
    expect(el('job-mail-watch')?.dataset['state']).toBe('watching');
    expect(text('job-mail-watch')).toBe('Watching for new mail');
  });

  it('shows why the mailbox is not watched, in the server’s words', async () => {
    await show({
      ...MAIL_JOB,
      mailWatch: {
        state: 'error',
        reason:
          "IMAP login failed for 'me' at imap.work.test:993: wrong user name or password.",
      },
    });
    expect(el('job-mail-watch')?.dataset['state']).toBe('error');
    expect(text('job-mail-watch')).toBe(
      "Not watching: IMAP login failed for 'me' at imap.work.test:993: wrong user name or password.",
    );

    fixture.componentRef.setInput('job', {
      ...MAIL_JOB,
      mailTrigger: { accountId: 'a1', folder: 'Receipts', address: null },
      mailWatch: { state: 'connecting', reason: null },
    });
    await fixture.whenStable();
    expect(text('job-description')).toBe(
      'When mail arrives in a removed account · Receipts',
    );
    expect(text('job-mail-watch')).toBe('Connecting to the mailbox…');
  });

  it('shows no watch line while the job is paused, and the schedule for a scheduled job', async () => {
    await show({ ...MAIL_JOB, enabled: false, mailWatch: null });
    expect(el('job-mail-watch')).toBeNull();
    await show(cronJob('j1', 'Morning'));
    expect(text('job-description')).toBe('At 08:00, Monday through Friday');
    expect(text('job-expression')).toBe('0 8 * * 1-5');
    expect(el('job-mail-watch')).toBeNull();
  });

  it('names the tools the job may use on its own, and nothing when there are none', async () => {
    await show(cronJob('j1', 'Morning'));
    expect(el('job-act-on-own')).toBeNull();
    await show(
      cronJob('j2', 'Replies', {
        actOnOwnTools: ['whatsapp_send_message', 'calendar_actions'],
      }),
    );
    expect(text('job-act-on-own')).toBe(
      'Send WhatsApp messages, Change and delete calendar events',
    );
  });
});

describe('CronJobCard: Run now', () => {
  let fixture: ComponentFixture<CronJobCard>;
  let http: HttpTestingController;
  let changed: CronJobView[];

  const root = () => fixture.nativeElement as HTMLElement;
  const { el, text } = testIdQueries(root);

  async function show(job: CronJobView): Promise<void> {
    fixture = TestBed.createComponent(CronJobCard);
    fixture.componentRef.setInput('job', job);
    changed = [];
    fixture.componentInstance.changed.subscribe((j) => {
      changed.push(j);
      fixture.componentRef.setInput('job', j);
    });
    await fixture.whenStable();
  }

  beforeEach(() => {
    ({ http } = setUpApiTest(CronJobCard));
  });
  afterEach(() => tearDownApiTest(http));

  it('shows the running state, and a 409 "already running" as running', async () => {
    await show(cronJob('j1', 'Morning'));
    expect(text('run-job')).toBe('Run now');
    el<HTMLButtonElement>('run-job')?.click();
    await fixture.whenStable();
    expect(text('run-job')).toBe('Starting…');
    expect(el<HTMLButtonElement>('run-job')?.disabled).toBe(true);
    http.expectOne('/api/cronjobs/j1/run').flush(
      {
        statusCode: 409,
        message: 'This job is already running. Wait for the run to finish.',
        error: 'Conflict',
      },
      { status: 409, statusText: 'Conflict' },
    );
    await fixture.whenStable();
    expect(changed.at(-1)?.running).toBe(true);
    expect(text('run-job')).toBe('Running…');
    expect(el<HTMLButtonElement>('run-job')?.disabled).toBe(true);
    expect(root().textContent).toContain(
      'This job is already running. Wait for the run to finish.',
    );
  });
});

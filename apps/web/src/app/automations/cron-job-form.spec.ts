import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type {
  AccountView,
  CronJobView,
  EmailAccountView,
} from '@metatronos/shared-types';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import { cronJob } from '../testing/automation-data';
import { CronJobForm, type CronJobSaved } from './cron-job-form';

function emailAccount(id: string, address: string): EmailAccountView {
  const server = {
    host: '127.0.0.1',
    port: 993,
    secure: true,
    user: address,
    password: '••••••••',
  };
  return {
    id,
    kind: 'email',
    name: address.split('@')[0],
    address,
    imap: server,
    smtp: { ...server, port: 465 },
    createdAt: '2026-11-01T10:00:00.000Z',
    updatedAt: '2026-11-01T10:00:00.000Z',
  };
}

const WORK = emailAccount('a1', 'me@work.test');
const HOME = emailAccount('a2', 'me@home.test');
const CALENDAR: AccountView = {
  id: 'c1',
  kind: 'calendar',
  name: 'Calendar',
  url: 'https://cal.example.test/',
  user: 'me',
  password: '••••••••',
  secure: true,
  address: 'me',
  createdAt: '2026-11-01T10:00:00.000Z',
  updatedAt: '2026-11-01T10:00:00.000Z',
};

describe('CronJobForm: when new mail arrives', () => {
  let fixture: ComponentFixture<CronJobForm>;
  let http: HttpTestingController;
  let saved: CronJobSaved[];

  const root = () => fixture.nativeElement as HTMLElement;
  const { el, text, texts } = testIdQueries(root);
  const stable = () => fixture.whenStable();
  const saveButton = () =>
    el<HTMLButtonElement>('save-job') as HTMLButtonElement;

  function type(testId: string, value: string): void {
    const field = el<HTMLInputElement>(testId) as HTMLInputElement;
    field.value = value;
    field.dispatchEvent(new Event('input'));
  }

  function choose(testId: string, value: string): void {
    const select = el<HTMLSelectElement>(testId) as HTMLSelectElement;
    select.value = value;
    select.dispatchEvent(new Event('change'));
  }

  async function open(
    job: CronJobView | null = null,
    modes: { name: string; description: string; tools: [] }[] = [],
  ): Promise<void> {
    fixture = TestBed.createComponent(CronJobForm);
    fixture.componentRef.setInput('job', job);
    saved = [];
    fixture.componentInstance.saved.subscribe((event) => saved.push(event));
    await stable();
    http.expectOne('/api/tools').flush({ modes, meta: [] });
    await stable();
  }

  async function pickMail(): Promise<void> {
    (
      el('job-trigger-mail')?.querySelector('input') as HTMLInputElement
    ).click();
    await stable();
  }

  beforeEach(() => {
    ({ http } = setUpApiTest(CronJobForm));
  });
  afterEach(() => tearDownApiTest(http));

  it('starts a new mail-triggered job in the email mode, unless the owner picked another mode', async () => {
    const modes = ['default', 'data', 'email'].map((name) => ({
      name,
      description: name,
      tools: [] as [],
    }));
    await open(null, modes);
    await pickMail();
    http.expectOne('/api/accounts').flush([WORK]);
    await stable();
    expect(el<HTMLSelectElement>('job-mode-input')?.value).toBe('email');

    fixture.destroy();
    await open(null, modes);
    choose('job-mode-input', 'data');
    await stable();
    await pickMail();
    http.expectOne('/api/accounts').flush([WORK]);
    await stable();
    expect(el<HTMLSelectElement>('job-mode-input')?.value).toBe('data');
  });

  it('creates a job that runs on new mail in a chosen email account and folder', async () => {
    await open();
    type('job-name-input', 'Triage');
    type('job-instruction-input', 'Sort the new mail.');
    expect(el('job-account-input')).toBeNull();
    await pickMail();
    // Only email accounts can be watched.
    http.expectOne('/api/accounts').flush([WORK, CALENDAR, HOME]);
    await stable();
    expect(el('job-expression-input')).toBeNull();
    expect(
      Array.from(
        (el<HTMLSelectElement>('job-account-input') as HTMLSelectElement)
          .options,
      ).map((o) => o.textContent?.trim()),
    ).toEqual(['Choose an account', 'me@work.test (me)', 'me@home.test (me)']);
    expect(el<HTMLInputElement>('job-folder-input')?.value).toBe('INBOX');
    expect(saveButton().disabled).toBe(true);

    choose('job-account-input', 'a2');
    await stable();
    expect(saveButton().disabled).toBe(false);
    type('job-folder-input', '  ');
    await stable();
    expect(saveButton().disabled).toBe(true);
    type('job-folder-input', 'Receipts');
    await stable();

    saveButton().click();
    await stable();
    const create = http.expectOne('/api/cronjobs');
    expect(create.request.method).toBe('POST');
    expect(create.request.body).toEqual({
      name: 'Triage',
      instruction: 'Sort the new mail.',
      mailTrigger: { accountId: 'a2', folder: 'Receipts' },
      mode: 'default',
      enabled: true,
    });
    const job = cronJob('j5', 'Triage', {
      cronExpression: null,
      mailTrigger: {
        accountId: 'a2',
        folder: 'Receipts',
        address: HOME.address,
      },
    });
    create.flush(job, { status: 201, statusText: 'Created' });
    await stable();
    expect(saved).toEqual([{ job, created: true }]);
  });

  it('chooses the only email account, and says when there is none', async () => {
    await open();
    await pickMail();
    http.expectOne('/api/accounts').flush([CALENDAR, WORK]);
    await stable();
    expect(el<HTMLSelectElement>('job-account-input')?.value).toBe('a1');

    await open();
    await pickMail();
    http.expectOne('/api/accounts').flush([CALENDAR]);
    await stable();
    expect(text('job-no-accounts')).toBe(
      'No email account yet: add one on the Accounts page.',
    );
  });

  it('edits a mail-triggered job and sends only the changed trigger; switching to a schedule sends the expression', async () => {
    const job = cronJob('j6', 'Triage', {
      cronExpression: null,
      description: 'When new mail arrives in me@work.test · INBOX',
      nextRuns: [],
      mailTrigger: { accountId: 'a1', folder: 'INBOX', address: WORK.address },
      mailWatch: { state: 'watching', reason: null },
    });
    await open(job);
    http.expectOne('/api/accounts').flush([WORK, HOME]);
    await stable();
    expect(el<HTMLSelectElement>('job-account-input')?.value).toBe('a1');
    expect(saveButton().disabled).toBe(true);
    type('job-folder-input', 'Invoices');
    await stable();
    saveButton().click();
    await stable();
    const patch = http.expectOne('/api/cronjobs/j6');
    expect(patch.request.method).toBe('PATCH');
    expect(patch.request.body).toEqual({
      mailTrigger: { accountId: 'a1', folder: 'Invoices' },
    });
    patch.flush(job);
    await stable();

    (
      el('job-trigger-schedule')?.querySelector('input') as HTMLInputElement
    ).click();
    await stable();
    expect(el('job-account-input')).toBeNull();
    type('job-expression-input', '0 8 * * *');
    await new Promise((resolve) => setTimeout(resolve, 350));
    http
      .expectOne((req) => req.url === '/api/cronjobs/preview')
      .flush({
        valid: true,
        error: null,
        description: 'At 08:00',
        nextRuns: [],
        timezone: 'Europe/Paris',
      });
    await stable();
    expect(texts('job-preview-description')).toEqual(['At 08:00']);
    saveButton().click();
    await stable();
    const toSchedule = http.expectOne('/api/cronjobs/j6');
    expect(toSchedule.request.body).toEqual({ cronExpression: '0 8 * * *' });
    toSchedule.flush(job);
    await stable();
  });

  it('shows why the accounts could not be loaded', async () => {
    await open();
    await pickMail();
    http
      .expectOne('/api/accounts')
      .flush(
        { message: 'Accounts are unavailable' },
        { status: 503, statusText: 'Service Unavailable' },
      );
    await stable();
    expect(text('job-accounts-error')).toContain('Accounts are unavailable');
    expect(saveButton().disabled).toBe(true);
  });
});

describe('CronJobForm: may act on its own', () => {
  let fixture: ComponentFixture<CronJobForm>;
  let http: HttpTestingController;
  const root = () => fixture.nativeElement as HTMLElement;
  const { el, all, text } = testIdQueries(root);
  const stable = () => fixture.whenStable();
  const tool = (name: string) => ({
    name,
    description: name,
    available: true,
    reason: null,
    enabled: true,
  });
  const MODES = [
    {
      name: 'default',
      description: 'Everyday',
      accountKind: null,
      tools: [tool('web_search'), tool('save_memory')],
    },
    {
      name: 'whatsapp',
      description: 'WhatsApp',
      accountKind: null,
      tools: [
        tool('whatsapp_read_messages'),
        tool('whatsapp_send_message'),
        tool('whatsapp_manage_permission'),
      ],
    },
    {
      name: 'email',
      description: 'Email',
      accountKind: 'email',
      tools: [tool('email_actions')],
    },
  ];

  async function open(job: CronJobView | null): Promise<void> {
    fixture = TestBed.createComponent(CronJobForm);
    fixture.componentRef.setInput('job', job);
    await stable();
    http.expectOne('/api/tools').flush({ modes: MODES, meta: [] });
    await stable();
    if (job?.cronExpression) {
      // The schedule is checked before anything can be saved.
      await new Promise((resolve) => setTimeout(resolve, 350));
      http
        .expectOne((req) => req.url === '/api/cronjobs/preview')
        .flush({
          valid: true,
          error: null,
          description: 'At 08:00',
          nextRuns: [],
          timezone: 'Europe/Paris',
        });
      await stable();
    }
  }

  const choices = () =>
    all('job-act-on-own-tool').map((box) => box.getAttribute('data-tool'));
  async function tick(name: string): Promise<void> {
    root()
      .querySelector<HTMLInputElement>(
        `[data-testid="job-act-on-own-tool"][data-tool="${name}"] input`,
      )
      ?.click();
    await stable();
  }
  function chooseMode(mode: string): void {
    const select = el<HTMLSelectElement>('job-mode-input') as HTMLSelectElement;
    select.value = mode;
    select.dispatchEvent(new Event('change'));
  }

  beforeEach(() => {
    ({ http } = setUpApiTest(CronJobForm));
  });
  afterEach(() => tearDownApiTest(http));

  it('offers the sending and deleting tools of the job’s mode, never a granting one, and saves the ticked ones', async () => {
    const job = cronJob('j1', 'Replies', { mode: 'whatsapp' });
    await open(job);
    expect(choices()).toEqual(['whatsapp_send_message']);
    expect(text('job-act-on-own')).toContain('May act on its own');
    expect(text('job-act-on-own')).toContain('at most 3 sends per run');
    expect(text('job-act-on-own')).toContain('Send WhatsApp messages');
    // Nothing changed yet.
    expect(el<HTMLButtonElement>('save-job')?.disabled).toBe(true);

    await tick('whatsapp_send_message');
    el<HTMLButtonElement>('save-job')?.click();
    await stable();
    const patch = http.expectOne('/api/cronjobs/j1');
    expect(patch.request.body).toEqual({
      actOnOwnTools: ['whatsapp_send_message'],
    });
    patch.flush({ ...job, actOnOwnTools: ['whatsapp_send_message'] });
    await stable();
  });

  it('keeps a chosen tool in view when the mode changes, and clears the list when unticked', async () => {
    const job = cronJob('j2', 'Mail', {
      mode: 'email',
      actOnOwnTools: ['email_actions'],
    });
    await open(job);
    expect(choices()).toEqual(['email_actions']);
    expect(
      root().querySelector<HTMLInputElement>(
        '[data-tool="email_actions"] input',
      )?.checked,
    ).toBe(true);

    chooseMode('default');
    await stable();
    expect(choices()).toEqual(['email_actions']);
    await tick('email_actions');
    el<HTMLButtonElement>('save-job')?.click();
    await stable();
    const patch = http.expectOne('/api/cronjobs/j2');
    expect(patch.request.body).toEqual({ mode: 'default', actOnOwnTools: [] });
    patch.flush({ ...job, mode: 'default', actOnOwnTools: [] });
    await stable();
  });

  it('shows no checklist for a mode without sending or deleting tools', async () => {
    await open(null);
    expect(el('job-act-on-own')).toBeNull();
  });

  function typeLimit(testId: string, value: string): void {
    const field = el<HTMLInputElement>(testId) as HTMLInputElement;
    field.value = value;
    field.dispatchEvent(new Event('input'));
  }

  it('shows the job\'s limits per run and saves only a changed one ("200,000" as typed)', async () => {
    const job = cronJob('j3', 'Limits', {
      maxRounds: 20,
      maxTokensPerRun: 200_000,
    });
    await open(job);
    expect(
      (el<HTMLInputElement>('job-max-rounds-input') as HTMLInputElement).value,
    ).toBe('20');
    typeLimit('job-max-tokens-input', '50,000');
    await stable();
    el<HTMLButtonElement>('save-job')?.click();
    await stable();
    const patch = http.expectOne('/api/cronjobs/j3');
    expect(patch.request.body).toEqual({ maxTokensPerRun: 50_000 });
    patch.flush({ ...job, maxTokensPerRun: 50_000 });
    await stable();
  });

  it('says in words when a limit is out of range, and does not save', async () => {
    const job = cronJob('j4', 'Limits');
    await open(job);
    typeLimit('job-max-rounds-input', '0');
    await stable();
    expect(text('job-max-rounds-error')).toBe('A whole number from 1 to 100.');
    typeLimit('job-max-tokens-input', 'lots');
    await stable();
    expect(text('job-max-tokens-error')).toBe(
      'A whole number from 1,000 to 10,000,000.',
    );
    expect(el<HTMLButtonElement>('save-job')?.disabled).toBe(true);
  });
});

import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import { type AccountView, PASSWORD_MASK } from '@metatronos/shared-types';
import { LEAVE_QUESTION, UnsavedChanges } from '../core/unsaved-changes';
import {
  PRESETS,
  calendarAccount,
  emailAccount,
  emailDraft,
} from '../testing/account-data';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import type { FakeEventStream } from '../testing/fake-event-stream';
import { AccountDirectory } from './account-directory';
import { AccountsPage } from './accounts-page';

describe('AccountsPage', () => {
  let http: HttpTestingController;
  let events: FakeEventStream;
  let fixture: ComponentFixture<AccountsPage>;
  const root = () => fixture.nativeElement as HTMLElement;
  const { el, all, text, texts } = testIdQueries(root);
  const stable = () => fixture.whenStable();
  const item = (id: string) =>
    root().querySelector<HTMLElement>(`[data-account-id="${id}"]`) ?? root();

  const WORK = emailAccount('work', 'Work mail', {
    smtp: {
      host: '127.0.0.1',
      port: 3025,
      secure: false,
      user: 'work@example.org',
      password: PASSWORD_MASK,
    },
  });
  const FAMILY = calendarAccount('family', 'Family');

  async function open(accounts: AccountView[] = [WORK, FAMILY]): Promise<void> {
    fixture = TestBed.createComponent(AccountsPage);
    await stable();
    http.expectOne('/api/accounts').flush(accounts);
    http.expectOne('/api/drafts?status=pending').flush([]);
    http.expectOne('/api/drafts?status=failed').flush([]);
    await stable();
  }

  async function click(testId: string, scope?: ParentNode): Promise<void> {
    const target = el(testId, scope);
    if (!target) throw new Error(`nothing to click: ${testId}`);
    target.click();
    await stable();
  }

  async function type(testId: string, value: string): Promise<void> {
    const field = el<HTMLInputElement>(testId);
    if (!field) throw new Error(`no field ${testId}`);
    field.value = value;
    field.dispatchEvent(new Event('input'));
    await stable();
  }

  beforeEach(() => {
    ({ http, events } = setUpApiTest(AccountsPage));
  });

  afterEach(() => {
    fixture.destroy();
    tearDownApiTest(http);
  });

  it('lists each account: name, address, host:port with TLS or plain, the login with its masked password', async () => {
    await open();
    expect(texts('account-name')).toEqual(['Work mail', 'Family']);
    const work = item('work');
    expect(text('account-address', work)).toBe('work@example.org');
    expect(texts('account-target', work)).toEqual([
      'imap.example.org:993',
      '127.0.0.1:3025',
    ]);
    const [imap, smtp] = all('account-connection', work);
    expect(el('account-tls', imap)?.textContent?.trim()).toBe('TLS');
    expect(el('account-plain', smtp)?.textContent?.trim()).toBe('plain');
    expect(texts('account-password', work)).toEqual([
      PASSWORD_MASK,
      PASSWORD_MASK,
    ]);
    expect(texts('account-target', item('family'))).toEqual([
      'https://dav.example.org/',
    ]);
    expect(text('account-kind', item('family'))).toBe('Calendar');
    // The chat's mode chip reads names from the same list.
    expect(TestBed.inject(AccountDirectory).label('family')).toBe('Family');
  });

  it('says so when there is no account', async () => {
    await open([]);
    expect(text('no-accounts')).toContain('No account yet.');
    expect(el('account-list')).toBeNull();
  });

  it('tests an account and shows what was checked, or the reason it failed', async () => {
    await open();
    await click('test-account', item('work'));
    expect(text('test-account', item('work'))).toBe('Connecting…');
    http
      .expectOne('/api/accounts/work/test')
      .flush({ ok: true, detail: 'IMAP and SMTP logins succeeded' });
    await stable();
    expect(text('account-test-passed', item('work'))).toBe(
      'IMAP and SMTP logins succeeded',
    );

    await click('test-account', item('family'));
    http
      .expectOne('/api/accounts/family/test')
      .flush(
        { message: 'CalDAV login failed: wrong password' },
        { status: 400, statusText: 'Bad Request' },
      );
    await stable();
    expect(text('account-error', item('family'))).toBe(
      'CalDAV login failed: wrong password',
    );
  });

  it('removes an account after a confirmation that Escape closes, focus going back to Remove', async () => {
    await open();
    await click('remove-account', item('work'));
    expect(text('remove-account-confirm')).toContain('Remove “Work mail”?');
    expect(document.activeElement).toBe(el('cancel-remove-account'));
    el('remove-account-confirm')?.dispatchEvent(
      new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }),
    );
    await stable();
    expect(el('remove-account-confirm')).toBeNull();
    expect(document.activeElement).toBe(el('remove-account', item('work')));
    http.expectNone('/api/accounts/work');

    await click('remove-account', item('work'));
    await click('confirm-remove-account');
    const req = http.expectOne('/api/accounts/work');
    expect(req.request.method).toBe('DELETE');
    req.flush(null, { status: 204, statusText: 'No Content' });
    await stable();
    expect(texts('account-name')).toEqual(['Family']);
  });

  it('adds an account through the form, lists it, and puts the focus back on Add account', async () => {
    await open([]);
    await click('add-account');
    http.expectOne('/api/accounts/presets').flush(PRESETS);
    await stable();
    expect(el('account-form')).not.toBeNull();
    expect(el<HTMLButtonElement>('add-account')?.disabled).toBe(true);

    await type('account-name-input', 'Work mail');
    await type('account-address-input', 'work@example.org');
    await type('imap-host', 'imap.example.org');
    await type('imap-password', 'pw');
    await type('smtp-host', 'smtp.example.org');
    expect(TestBed.inject(UnsavedChanges).dirty()).toBe(true);
    await click('save-account');
    http
      .expectOne('/api/accounts')
      .flush(WORK, { status: 201, statusText: 'Created' });
    await stable();
    expect(el('account-form')).toBeNull();
    expect(texts('account-name')).toEqual(['Work mail']);
    expect(TestBed.inject(UnsavedChanges).dirty()).toBe(false);
    expect(document.activeElement).toBe(el('add-account'));
  });

  it('saves the open form with Ctrl+S', async () => {
    await open();
    await click('edit-account', item('work'));
    http.expectOne('/api/accounts/presets').flush(PRESETS);
    await stable();
    await type('account-name-input', 'Office');
    el('account-name-input')?.focus();
    document.dispatchEvent(
      new KeyboardEvent('keydown', { key: 's', ctrlKey: true, bubbles: true }),
    );
    await stable();
    const req = http.expectOne('/api/accounts/work');
    expect(req.request.method).toBe('PATCH');
    expect(req.request.body).toEqual({ name: 'Office' });
    req.flush({ ...WORK, name: 'Office' });
    await stable();
    expect(texts('account-name')).toEqual(['Office', 'Family']);
    expect(document.activeElement).toBe(el('edit-account', item('work')));
  });

  it('asks before another form replaces one with unsaved edits', async () => {
    const questions: string[] = [];
    let agree = false;
    // The page asks through CONFIRM, which is the browser's confirm().
    const confirm = jest
      .spyOn(window, 'confirm')
      .mockImplementation((question) => {
        questions.push(String(question));
        return agree;
      });
    await open();
    await click('edit-account', item('work'));
    http.expectOne('/api/accounts/presets').flush(PRESETS);
    await stable();
    await type('account-name-input', 'Office');

    await click('edit-account', item('family'));
    expect(questions).toHaveLength(1);
    expect(el<HTMLInputElement>('account-name-input')?.value).toBe('Office');

    agree = true;
    await click('add-account');
    expect(questions).toHaveLength(2);
    expect(el<HTMLInputElement>('account-name-input')?.value).toBe('');
    expect(text('account-form')).toContain('Add an account');
    expect(questions[0]).toBe(LEAVE_QUESTION);
    confirm.mockRestore();
  });

  it('reloads the list on accounts.changed, keeping what is typed in an open form', async () => {
    await open();
    events.emit('accounts.changed', {
      id: 'new',
      change: 'created',
      at: '2026-11-28T10:00:00.000Z',
    });
    http
      .expectOne('/api/accounts')
      .flush([WORK, FAMILY, emailAccount('new', 'Side project')]);
    await stable();
    expect(texts('account-name')).toEqual([
      'Work mail',
      'Family',
      'Side project',
    ]);

    await click('edit-account', item('work'));
    http.expectOne('/api/accounts/presets').flush(PRESETS);
    await stable();
    await type('account-name-input', 'Office');
    events.emit('accounts.changed', {
      id: 'family',
      change: 'updated',
      at: '2026-11-28T10:01:00.000Z',
    });
    await stable();
    http.expectOne('/api/accounts').flush([WORK, { ...FAMILY, name: 'Home' }]);
    await stable();
    expect(texts('account-name')).toEqual(['Work mail', 'Home']);
    expect(el<HTMLInputElement>('account-name-input')?.value).toBe('Office');
    expect(TestBed.inject(UnsavedChanges).dirty()).toBe(true);
  });

  it('shows the emails waiting for approval on top', async () => {
    fixture = TestBed.createComponent(AccountsPage);
    await stable();
    http.expectOne('/api/accounts').flush([WORK]);
    http
      .expectOne('/api/drafts?status=pending')
      .flush([emailDraft('d1', { subject: 'Weekly report' })]);
    http.expectOne('/api/drafts?status=failed').flush([]);
    await stable();
    const card = el('drafts-card');
    expect(card?.textContent).toContain('Emails waiting for you (1)');
    expect(text('draft-subject')).toBe('Weekly report');
    // Above the accounts.
    const list = el('account-list');
    expect(
      card && list
        ? card.compareDocumentPosition(list) & Node.DOCUMENT_POSITION_FOLLOWING
        : 0,
    ).toBeTruthy();
  });
});

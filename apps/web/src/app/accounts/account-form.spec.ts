import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type { AccountView } from '@metatronos/shared-types';
import {
  PRESETS,
  calendarAccount,
  emailAccount,
} from '../testing/account-data';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import { AccountForm, type AccountSaved } from './account-form';

describe('AccountForm', () => {
  let http: HttpTestingController;
  let fixture: ComponentFixture<AccountForm>;
  let saved: AccountSaved[];
  const root = () => fixture.nativeElement as HTMLElement;
  const { el, text } = testIdQueries(root);
  const input = (testId: string) => el<HTMLInputElement>(testId);
  const stable = () => fixture.whenStable();

  async function type(testId: string, value: string): Promise<void> {
    const field = input(testId);
    if (!field) throw new Error(`no field ${testId}`);
    field.value = value;
    field.dispatchEvent(new Event('input'));
    field.dispatchEvent(new Event('blur'));
    await stable();
  }

  async function click(testId: string): Promise<void> {
    const target = el(testId);
    if (!target) throw new Error(`nothing to click: ${testId}`);
    target.click();
    await stable();
  }

  /** Ticks or unticks a mat-checkbox by its test id. */
  async function tick(testId: string): Promise<void> {
    const box = el(testId)?.querySelector('input');
    if (!box) throw new Error(`no checkbox ${testId}`);
    box.click();
    await stable();
  }

  async function open(account: AccountView | null = null): Promise<void> {
    fixture = TestBed.createComponent(AccountForm);
    fixture.componentRef.setInput('account', account);
    saved = [];
    fixture.componentInstance.saved.subscribe((event) => saved.push(event));
    await stable();
    http.expectOne('/api/accounts/presets').flush(PRESETS);
    await stable();
  }

  async function fillEmail(): Promise<void> {
    await type('account-name-input', 'Work mail');
    await type('account-address-input', 'me@example.org');
    await type('imap-host', 'imap.example.org');
    await type('imap-password', 'secret-1');
    await type('smtp-host', 'smtp.example.org');
  }

  beforeEach(() => {
    ({ http } = setUpApiTest(AccountForm));
  });

  afterEach(() => {
    fixture.destroy();
    tearDownApiTest(http);
  });

  it('fills the servers from a preset and shows its note; the calendar kind offers its own presets', async () => {
    await open();
    const select = el<HTMLSelectElement>('account-preset');
    expect(
      Array.from(select?.options ?? []).map((option) => option.text.trim()),
    ).toEqual(["Other: I'll type the servers", 'Gmail']);
    expect(el('account-preset-note')).toBeNull();

    if (!select) throw new Error('no preset select');
    select.value = 'gmail';
    select.dispatchEvent(new Event('change'));
    await stable();
    expect(input('imap-host')?.value).toBe('imap.gmail.com');
    expect(input('imap-port')?.value).toBe('993');
    expect(input('smtp-host')?.value).toBe('smtp.gmail.com');
    expect(input('smtp-port')?.value).toBe('465');
    expect(text('account-preset-note')).toBe(
      'Use an app password, not your Google password.',
    );

    await click('account-kind-calendar');
    const calendarSelect = el<HTMLSelectElement>('account-preset');
    expect(
      Array.from(calendarSelect?.options ?? []).map((o) => o.text.trim()),
    ).toEqual(["Other: I'll type the servers", 'Fastmail calendar']);
    expect(el('imap-host')).toBeNull();
    if (!calendarSelect) throw new Error('no preset select');
    calendarSelect.value = 'fastmail-cal';
    calendarSelect.dispatchEvent(new Event('change'));
    await stable();
    expect(input('calendar-url')?.value).toBe(
      'https://caldav.fastmail.com/dav/principals/user/{user}/',
    );
  });

  it('warns that the password travels unencrypted once TLS is unticked, and moves the usual port along', async () => {
    await open();
    expect(el('tls-warning')).toBeNull();
    expect(input('imap-port')?.value).toBe('993');

    await tick('imap-secure');
    expect(text('tls-warning')).toContain(
      'Without TLS, IMAP sends your password and messages unencrypted',
    );
    expect(input('imap-port')?.value).toBe('143');

    await tick('smtp-secure');
    expect(text('tls-warning')).toContain('IMAP and SMTP send');
    expect(input('smtp-port')?.value).toBe('587');

    await tick('imap-secure');
    await tick('smtp-secure');
    expect(el('tls-warning')).toBeNull();
    expect(input('imap-port')?.value).toBe('993');
  });

  it('says what is missing or wrong and sends nothing until it is fixed', async () => {
    await open();
    await type('account-name-input', 'Work mail');
    await type('account-address-input', 'not an address');
    await type('imap-port', '70000');
    // The login followed the address; cleared, it is missing.
    expect(input('imap-user')?.value).toBe('not an address');
    await type('imap-user', '');
    await click('save-account');

    expect(text('account-address-error')).toBe('This is not an email address.');
    expect(text('imap-host-error')).toBe('Enter the server name.');
    expect(text('imap-port-error')).toBe('A port from 1 to 65535.');
    expect(text('imap-user-error')).toBe('Enter the user name.');
    expect(text('imap-password-error')).toBe('Enter the password.');
    expect(text('smtp-host-error')).toBe('Enter the server name.');
    // SMTP logs in as IMAP: no login fields of its own to fill.
    expect(el('smtp-user')).toBeNull();
    expect(input('account-address-input')?.getAttribute('aria-invalid')).toBe(
      'true',
    );
    http.expectNone('/api/accounts');
  });

  it('saves with SMTP logging in as IMAP (the user following the address), shows Connecting…, and keeps everything typed when the server says no', async () => {
    await open();
    await fillEmail();
    expect(input('imap-user')?.value).toBe('me@example.org');
    await click('save-account');

    expect(text('account-connecting')).toBe('Connecting…');
    expect(text('save-account')).toBe('Connecting…');
    const req = http.expectOne('/api/accounts');
    expect(req.request.method).toBe('POST');
    expect(req.request.body).toEqual({
      kind: 'email',
      name: 'Work mail',
      address: 'me@example.org',
      imap: {
        host: 'imap.example.org',
        port: 993,
        secure: true,
        user: 'me@example.org',
        password: 'secret-1',
      },
      smtp: {
        host: 'smtp.example.org',
        port: 465,
        secure: true,
        user: 'me@example.org',
        password: 'secret-1',
      },
    });
    req.flush(
      { message: 'IMAP login failed: the user name or password is wrong' },
      { status: 400, statusText: 'Bad Request' },
    );
    await stable();

    expect(text('account-form-error')).toBe(
      'IMAP login failed: the user name or password is wrong',
    );
    expect(el('account-connecting')).toBeNull();
    expect(input('account-name-input')?.value).toBe('Work mail');
    expect(input('imap-host')?.value).toBe('imap.example.org');
    expect(input('imap-password')?.value).toBe('secret-1');
    expect(saved).toEqual([]);

    // A separate SMTP login, then the right password.
    await tick('same-login');
    await type('smtp-user', 'relay-user');
    await type('smtp-password', 'relay-secret');
    await type('imap-password', 'secret-2');
    expect(el('account-form-error')).toBeNull();
    await click('save-account');
    const retry = http.expectOne('/api/accounts');
    expect(retry.request.body.imap.password).toBe('secret-2');
    expect(retry.request.body.smtp).toEqual({
      host: 'smtp.example.org',
      port: 465,
      secure: true,
      user: 'relay-user',
      password: 'relay-secret',
    });
    const account = emailAccount('work', 'Work mail');
    retry.flush(account, { status: 201, statusText: 'Created' });
    await stable();
    expect(saved).toEqual([{ account, created: true }]);
  });

  it('tests the typed settings without storing them and shows what was checked', async () => {
    await open();
    await fillEmail();
    await click('test-account-form');
    const req = http.expectOne('/api/accounts/test');
    expect(req.request.method).toBe('POST');
    expect(req.request.body.imap.host).toBe('imap.example.org');
    req.flush({ ok: true, detail: 'IMAP and SMTP logins succeeded' });
    await stable();
    expect(text('account-test-passed')).toBe('IMAP and SMTP logins succeeded');
    expect(saved).toEqual([]);
  });

  it('edits with empty password fields that keep the saved ones, sending only what changed', async () => {
    await open(emailAccount('work', 'Work mail'));
    expect(input('account-name-input')?.value).toBe('Work mail');
    expect(input('imap-host')?.value).toBe('imap.example.org');
    expect(input('imap-password')?.value).toBe('');
    expect(text('imap-password-hint')).toBe(
      'Leave empty to keep the saved password.',
    );
    expect(el('account-kind-email')).toBeNull();

    await type('account-name-input', 'Office');
    // Editing the address leaves the stored login alone (it follows the address only on a new account).
    await type('account-address-input', 'office@example.org');
    expect(input('imap-user')?.value).toBe('work@example.org');
    await type('account-address-input', 'work@example.org');
    // Without a connection change, Test checks the stored account.
    await click('test-account-form');
    http
      .expectOne('/api/accounts/work/test')
      .flush({ ok: true, detail: 'IMAP and SMTP logins succeeded' });
    await stable();
    await click('save-account');
    const req = http.expectOne('/api/accounts/work');
    expect(req.request.method).toBe('PATCH');
    expect(req.request.body).toEqual({ name: 'Office' });
    req.flush(emailAccount('work', 'Office'));
    await stable();
    expect(saved.map((event) => event.account.name)).toEqual(['Office']);
  });

  it('sends a new password (for IMAP and SMTP alike) and a changed server when typed, and shows the 400 by the form', async () => {
    await open(emailAccount('work', 'Work mail'));
    await type('imap-password', 'new-secret');
    await type('imap-host', 'mail.example.org');
    await click('save-account');
    const req = http.expectOne('/api/accounts/work');
    expect(req.request.body).toEqual({
      imap: { host: 'mail.example.org', password: 'new-secret' },
      smtp: { password: 'new-secret' },
    });
    req.flush(
      { message: "Can't reach mail.example.org:993" },
      { status: 400, statusText: 'Bad Request' },
    );
    await stable();
    expect(text('account-form-error')).toBe("Can't reach mail.example.org:993");
    expect(input('imap-host')?.value).toBe('mail.example.org');
    expect(saved).toEqual([]);
  });

  it('adds a calendar: an http:// address needs TLS unticked, {user} becomes the user name', async () => {
    await open();
    await click('account-kind-calendar');
    await type('account-name-input', 'Family');
    await type('calendar-url', 'http://127.0.0.1:5232/{user}/');
    await type('calendar-user', 'ann');
    await type('calendar-password', 'pw');
    await click('save-account');
    expect(text('calendar-url-error')).toBe(
      'A plain http:// address: untick TLS to allow it, or use https://.',
    );
    http.expectNone('/api/accounts');

    await tick('calendar-secure');
    expect(text('tls-warning')).toContain('CalDAV sends your password');
    await click('save-account');
    const req = http.expectOne('/api/accounts');
    expect(req.request.body).toEqual({
      kind: 'calendar',
      name: 'Family',
      url: 'http://127.0.0.1:5232/ann/',
      user: 'ann',
      password: 'pw',
      secure: false,
    });
    req.flush(calendarAccount('cal', 'Family'), {
      status: 201,
      statusText: 'Created',
    });
    await stable();
    expect(saved).toHaveLength(1);
  });
});

import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import { MatDialogRef } from '@angular/material/dialog';
import { Subject } from 'rxjs';
import { CONFIRM, LEAVE_QUESTION } from '../core/unsaved-changes';
import type { WhatsAppPermission } from '@metatronos/shared-types';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import type { FakeEventStream } from '../testing/fake-event-stream';
import {
  WhatsAppPermissionsDialog,
  autoReplyPausedUntil,
  phoneNumberError,
} from './whatsapp-permissions-dialog';

const LIST_URL = '/api/whatsapp/permissions';

function permission(
  id: string,
  displayName: string,
  phoneNumber: string,
  overrides: Partial<WhatsAppPermission> = {},
): WhatsAppPermission {
  return {
    id,
    phoneNumber,
    displayName,
    contactId: null,
    canRead: false,
    canReply: false,
    trusted: false,
    chatId: null,
    autoReplyPausedUntil: null,
    createdAt: '2026-11-01T10:00:00.000Z',
    updatedAt: '2026-11-01T10:00:00.000Z',
    ...overrides,
  };
}

const MOM = permission('p1', 'Mom', '14155551234', { canRead: true });
const BOB = permission('p2', 'bob', '447700900123');
const ALICE = permission('p3', 'Alice', '33612345678', {
  canRead: true,
  canReply: true,
  trusted: true,
});

describe('WhatsAppPermissionsDialog', () => {
  let fixture: ComponentFixture<WhatsAppPermissionsDialog>;
  let http: HttpTestingController;
  let events: FakeEventStream;

  const root = () => fixture.nativeElement as HTMLElement;
  const { el, all, text, texts } = testIdQueries(root);
  const stable = () => fixture.whenStable();
  const row = (id: string) =>
    root().querySelector<HTMLElement>(
      `[data-permission-id="${id}"]`,
    ) as HTMLElement;
  const switchOf = (id: string, testId: string) =>
    el(testId, row(id))?.querySelector<HTMLButtonElement>(
      'button[role="switch"]',
    ) as HTMLButtonElement;
  const input = (testId: string) =>
    el<HTMLInputElement>(testId) as HTMLInputElement;

  function type(testId: string, value: string): void {
    input(testId).value = value;
    input(testId).dispatchEvent(new Event('input'));
  }

  async function load(
    list: WhatsAppPermission[] = [MOM, BOB, ALICE],
  ): Promise<void> {
    fixture = TestBed.createComponent(WhatsAppPermissionsDialog);
    await stable();
    http.expectOne(LIST_URL).flush(list);
    await stable();
  }

  async function submit(): Promise<void> {
    el('add-permission')?.click();
    await stable();
  }

  let dialogRef: {
    close: jest.Mock;
    disableClose: boolean;
    backdropClick: () => Subject<MouseEvent>;
    keydownEvents: () => Subject<KeyboardEvent>;
  };
  let backdrop: Subject<MouseEvent>;
  let keys: Subject<KeyboardEvent>;
  let confirm: jest.Mock;

  beforeEach(() => {
    backdrop = new Subject();
    keys = new Subject();
    confirm = jest.fn(() => false);
    dialogRef = {
      close: jest.fn(),
      disableClose: false,
      backdropClick: () => backdrop,
      keydownEvents: () => keys,
    };
    TestBed.configureTestingModule({
      providers: [
        { provide: MatDialogRef, useValue: dialogRef },
        { provide: CONFIRM, useValue: confirm },
      ],
    });
    ({ http, events } = setUpApiTest(WhatsAppPermissionsDialog));
  });

  afterEach(() => {
    tearDownApiTest(http);
  });

  it('explains that nobody is visible until allowed, and what trusted means', async () => {
    await load([]);
    expect(text('permissions-explanation')).toContain(
      'Nobody on WhatsApp is visible to Metatron until you allow them here',
    );
    expect(text('permissions-explanation')).toContain('Trusted');
    expect(text('permissions-explanation')).toContain('memory');
    expect(el('no-permissions')).not.toBeNull();
  });

  it('lists the contacts by name with their number and switches', async () => {
    await load();
    expect(texts('permission-name')).toEqual(['Alice', 'bob', 'Mom']);
    expect(text('permission-phone', row('p1'))).toBe('+14155551234');
    expect(switchOf('p1', 'permission-read').getAttribute('aria-checked')).toBe(
      'true',
    );
    expect(
      switchOf('p1', 'permission-reply').getAttribute('aria-checked'),
    ).toBe('false');
    expect(
      switchOf('p3', 'permission-trusted').getAttribute('aria-checked'),
    ).toBe('true');
    expect(
      switchOf('p1', 'permission-trusted').getAttribute('aria-label'),
    ).toBe('Trusted, Mom');
  });

  it('switches Reply with PATCH { canReply } and takes the answer', async () => {
    await load();
    switchOf('p1', 'permission-reply').click();
    await stable();
    const req = http.expectOne(`${LIST_URL}/p1`);
    expect(req.request.method).toBe('PATCH');
    expect(req.request.body).toEqual({ canReply: true });
    req.flush({
      ...MOM,
      canReply: true,
      updatedAt: '2026-11-02T10:00:00.000Z',
    });
    await stable();
    expect(
      switchOf('p1', 'permission-reply').getAttribute('aria-checked'),
    ).toBe('true');
  });

  it('switches Trusted off with PATCH { trusted: false }', async () => {
    await load();
    switchOf('p3', 'permission-trusted').click();
    await stable();
    const req = http.expectOne(`${LIST_URL}/p3`);
    expect(req.request.body).toEqual({ trusted: false });
    req.flush({ ...ALICE, trusted: false });
    await stable();
    expect(
      switchOf('p3', 'permission-trusted').getAttribute('aria-checked'),
    ).toBe('false');
  });

  it('shows a bot-loop pause with its end, and Resume lifts it', async () => {
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const paused = { ...ALICE, autoReplyPausedUntil: until };
    await load([
      MOM,
      paused,
      permission('p4', 'Old', '14155550000', {
        autoReplyPausedUntil: '2020-01-01T00:00:00.000Z',
      }),
    ]);
    expect(all('permission-paused')).toHaveLength(1);
    expect(text('permission-paused', row('p3'))).toContain(
      `Auto-replies paused until ${autoReplyPausedUntil(paused)}`,
    );
    expect(text('permission-paused', row('p3'))).toContain(
      'loop with another bot',
    );
    const resume = el<HTMLButtonElement>(
      'resume-auto-reply',
      row('p3'),
    ) as HTMLButtonElement;
    expect(resume.getAttribute('aria-label')).toBe(
      'Resume auto-replies to Alice',
    );
    resume.click();
    await stable();
    const req = http.expectOne(`${LIST_URL}/p3/resume-auto-reply`);
    expect(req.request.method).toBe('POST');
    expect(
      el<HTMLButtonElement>('resume-auto-reply', row('p3'))?.disabled,
    ).toBe(true);
    req.flush({ ...ALICE, autoReplyPausedUntil: null });
    await stable();
    expect(all('permission-paused')).toHaveLength(0);
  });

  it('keeps the pause and says why when Resume fails', async () => {
    const paused = {
      ...ALICE,
      autoReplyPausedUntil: new Date(Date.now() + 3_600_000).toISOString(),
    };
    await load([paused]);
    el('resume-auto-reply', row('p3'))?.click();
    await stable();
    http
      .expectOne(`${LIST_URL}/p3/resume-auto-reply`)
      .flush(
        { statusCode: 404, message: 'Permission not found' },
        { status: 404, statusText: 'Not Found' },
      );
    await stable();
    expect(all('permission-paused')).toHaveLength(1);
    expect(text('permission-error', row('p3'))).toContain(
      'Permission not found',
    );
  });

  it('puts a failed switch back and says why', async () => {
    await load();
    switchOf('p1', 'permission-read').click();
    await stable();
    http.expectOne(`${LIST_URL}/p1`).flush(
      {
        statusCode: 404,
        message: 'Permission not found',
        error: 'Not Found',
      },
      { status: 404, statusText: 'Not Found' },
    );
    await stable();
    expect(switchOf('p1', 'permission-read').getAttribute('aria-checked')).toBe(
      'true',
    );
    expect(text('permission-error', row('p1'))).toBe('Permission not found');
    expect(el('permission-error', row('p2'))).toBeNull();
  });

  it('closes at once with nothing typed, and asks first when a contact was typed but not added', async () => {
    await load([]);
    expect(dialogRef.disableClose).toBe(true);
    el('close-permissions')?.click();
    expect(confirm).not.toHaveBeenCalled();
    expect(dialogRef.close).toHaveBeenCalledTimes(1);

    type('permission-name-input', 'Ana');
    await stable();
    el('close-permissions')?.click();
    backdrop.next(new MouseEvent('click'));
    const escape = new KeyboardEvent('keydown', {
      key: 'Escape',
      cancelable: true,
    });
    keys.next(escape);
    expect(escape.defaultPrevented).toBe(true);
    expect(confirm).toHaveBeenCalledTimes(3);
    expect(confirm).toHaveBeenCalledWith(LEAVE_QUESTION);
    expect(dialogRef.close).toHaveBeenCalledTimes(1);

    confirm.mockReturnValue(true);
    keys.next(new KeyboardEvent('keydown', { key: 'Escape' }));
    expect(dialogRef.close).toHaveBeenCalledTimes(2);
  });

  it('checks the form before sending', async () => {
    await load([]);
    await submit();
    expect(text('permission-phone-error')).toBe('Enter a phone number.');
    expect(text('permission-name-error')).toBe('Enter a name.');
    type('permission-phone-input', '12 34');
    await stable();
    expect(text('permission-phone-error')).toContain('country code');
    expect(phoneNumberError('+1 (415) 555-1234')).toBeNull();
    expect(phoneNumberError('1234567890123456')).not.toBeNull();
  });

  it('adds a contact with its digits and name, keeping the 409 message and the typed values', async () => {
    await load([MOM]);
    type('permission-phone-input', '+44 7700 900123');
    type('permission-name-input', '  Bob ');
    await stable();
    await submit();
    let req = http.expectOne(LIST_URL);
    expect(req.request.method).toBe('POST');
    // A new contact starts as Allow does on every channel: Read and Reply on, not trusted.
    expect(req.request.body).toEqual({
      phoneNumber: '447700900123',
      displayName: 'Bob',
      canRead: true,
      canReply: true,
    });
    req.flush(
      {
        statusCode: 409,
        message: 'Permission already exists for this phone number',
        error: 'Conflict',
      },
      { status: 409, statusText: 'Conflict' },
    );
    await stable();
    expect(text('permission-add-error')).toBe(
      'Permission already exists for this phone number',
    );
    expect(el('permission-add-error')?.getAttribute('role')).toBe('alert');
    expect(input('permission-phone-input').value).toBe('+44 7700 900123');
    expect(input('permission-name-input').value).toBe('  Bob ');

    type('permission-name-input', 'Bob');
    await stable();
    expect(el('permission-add-error')).toBeNull();
    await submit();
    req = http.expectOne(LIST_URL);
    req.flush({ ...BOB, displayName: 'Bob' });
    await stable();
    expect(texts('permission-name')).toEqual(['Bob', 'Mom']);
    expect(input('permission-phone-input').value).toBe('');
    expect(input('permission-name-input').value).toBe('');
    expect(el('permission-phone-error')).toBeNull();
  });

  it("shows the server's 400 in the form", async () => {
    await load([]);
    type('permission-phone-input', '+1 415 555 1234');
    type('permission-name-input', 'Mom');
    await stable();
    await submit();
    http.expectOne(LIST_URL).flush(
      {
        statusCode: 400,
        message: 'Invalid phone number',
        error: 'Bad Request',
      },
      { status: 400, statusText: 'Bad Request' },
    );
    await stable();
    expect(text('permission-add-error')).toBe('Invalid phone number');
  });

  it('removes a contact after the confirmation', async () => {
    await load();
    el('delete-permission', row('p2'))?.click();
    await stable();
    expect(text('delete-permission-confirm', row('p2'))).toContain(
      'Remove bob?',
    );
    el('cancel-delete-permission', row('p2'))?.click();
    await stable();
    expect(el('delete-permission-confirm')).toBeNull();

    // Escape cancels the confirmation only (the dialog stays open).
    el('delete-permission', row('p2'))?.click();
    await stable();
    // The dialog closes on an Escape that reaches the document: this one must not.
    const reachedDocument = jest.fn();
    document.addEventListener('keydown', reachedDocument);
    const escape = new KeyboardEvent('keydown', {
      key: 'Escape',
      bubbles: true,
      cancelable: true,
    });
    el('cancel-delete-permission', row('p2'))?.dispatchEvent(escape);
    await stable();
    expect(el('delete-permission-confirm')).toBeNull();
    document.removeEventListener('keydown', reachedDocument);
    expect(reachedDocument).not.toHaveBeenCalled();

    el('delete-permission', row('p2'))?.click();
    await stable();
    el('confirm-delete-permission', row('p2'))?.click();
    await stable();
    const req = http.expectOne(`${LIST_URL}/p2`);
    expect(req.request.method).toBe('DELETE');
    req.flush({ success: true });
    await stable();
    expect(texts('permission-name')).toEqual(['Alice', 'Mom']);
    expect(all('permission-item')).toHaveLength(2);
  });

  it('keeps a contact whose removal failed', async () => {
    await load();
    el('delete-permission', row('p1'))?.click();
    await stable();
    el('confirm-delete-permission', row('p1'))?.click();
    await stable();
    http.expectOne(`${LIST_URL}/p1`).flush(
      {
        statusCode: 404,
        message: 'Permission not found',
        error: 'Not Found',
      },
      { status: 404, statusText: 'Not Found' },
    );
    await stable();
    expect(texts('permission-name')).toEqual(['Alice', 'bob', 'Mom']);
    expect(text('permission-error', row('p1'))).toBe('Permission not found');
  });

  it('reloads when a permission changes elsewhere, but not for a row with a request running', async () => {
    await load([MOM]);
    events.emit('whatsapp.permissions.changed', {
      id: 'p2',
      change: 'created',
      by: 'ai',
      at: '2026-11-21T22:00:00.000Z',
    });
    await stable();
    http.expectOne(LIST_URL).flush([MOM, BOB]);
    await stable();
    expect(texts('permission-name')).toEqual(['bob', 'Mom']);

    switchOf('p1', 'permission-reply').click();
    await stable();
    events.emit('whatsapp.permissions.changed', {
      id: 'p1',
      change: 'updated',
      by: 'owner',
      at: '2026-11-21T22:00:01.000Z',
    });
    await stable();
    http.expectOne(`${LIST_URL}/p1`).flush({ ...MOM, canReply: true });
    await stable();
    http.expectNone(LIST_URL);
  });
});

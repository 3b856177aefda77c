import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type { RestoreResult } from '@metatronos/shared-types';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import { BackupCard, formatBytes } from './backup-card';

const RESULT: RestoreResult = {
  restored: true,
  appVersion: '0.1.0',
  createdAt: '2026-03-02T10:15:00.000Z',
  collections: [
    { name: 'chats', count: 3 },
    { name: 'messages', count: 20 },
  ],
  files: 4,
  bytes: 1234,
};

describe('BackupCard', () => {
  let fixture: ComponentFixture<BackupCard>;
  let http: HttpTestingController;
  const root = () => fixture.nativeElement as HTMLElement;
  const { el, text } = testIdQueries(root);
  const stable = () => fixture.whenStable();

  beforeEach(async () => {
    ({ http } = setUpApiTest(BackupCard));
    fixture = TestBed.createComponent(BackupCard);
    await stable();
  });
  afterEach(() => tearDownApiTest(http));

  async function choose(file: File): Promise<void> {
    const input = el<HTMLInputElement>('backup-file') as HTMLInputElement;
    Object.defineProperty(input, 'files', {
      value: [file],
      configurable: true,
    });
    input.dispatchEvent(new Event('change'));
    await stable();
  }

  async function type(testId: string, value: string): Promise<void> {
    const input = el<HTMLInputElement>(testId) as HTMLInputElement;
    input.value = value;
    input.dispatchEvent(new Event('input'));
    await stable();
  }

  it('downloads from /api/backup and says the secrets are not included', () => {
    const link = el<HTMLAnchorElement>('backup-download') as HTMLAnchorElement;
    expect(link.getAttribute('href')).toBe('/api/backup');
    expect(link.hasAttribute('download')).toBe(true);
    expect(text('backup-keys-warning')).toContain(
      'Secrets not included; give a passphrase to include them',
    );
    link.addEventListener('click', (e) => e.preventDefault());
    link.click();
    http.expectNone('/api/backup');
  });

  it('with a passphrase, posts it in the body (not the URL) and says the secrets are sealed', async () => {
    await type('backup-passphrase', 'correct horse battery');
    expect(text('backup-keys-warning')).toContain(
      'encrypted with this passphrase',
    );
    const created: string[] = [];
    (
      URL as unknown as { createObjectURL: (b: Blob) => string }
    ).createObjectURL = (blob: Blob) => {
      created.push(blob.type);
      return 'blob:backup';
    };
    (URL as unknown as { revokeObjectURL: () => void }).revokeObjectURL = () =>
      undefined;
    const clicked = jest
      .spyOn(HTMLAnchorElement.prototype, 'click')
      .mockImplementation(() => undefined);
    (
      el<HTMLAnchorElement>('backup-download') as HTMLAnchorElement
    ).dispatchEvent(new MouseEvent('click', { cancelable: true }));
    const req = http.expectOne('/api/backup');
    expect(req.request.method).toBe('POST');
    expect(req.request.body).toEqual({ passphrase: 'correct horse battery' });
    expect(req.request.urlWithParams).not.toContain('correct');
    req.flush(new Blob(['gz'], { type: 'application/gzip' }), {
      headers: {
        'Content-Disposition':
          'attachment; filename="metatronos-backup-2026-03-02-10-15.tar.gz"',
      },
    });
    expect(created).toEqual(['application/gzip']);
    expect(clicked).toHaveBeenCalled();
    clicked.mockRestore();
  });

  it('shows why a backup with a passphrase was refused', async () => {
    await type('backup-passphrase', 'short');
    (
      el<HTMLAnchorElement>('backup-download') as HTMLAnchorElement
    ).dispatchEvent(new MouseEvent('click', { cancelable: true }));
    http.expectOne('/api/backup').flush(
      new Blob([
        JSON.stringify({
          statusCode: 400,
          message: 'passphrase must be at least 8 characters',
        }),
      ]),
      { status: 400, statusText: 'Bad Request' },
    );
    await stable();
    expect(el('backup-error')).not.toBeNull();
  });

  it('asks before restoring; Cancel sends nothing', async () => {
    await choose(new File(['x'.repeat(2048)], 'old.tar.gz'));
    expect(text('restore-confirm')).toContain('Restore old.tar.gz (2.0 KB)?');
    (el<HTMLButtonElement>('restore-cancel') as HTMLButtonElement).click();
    await stable();
    expect(el('restore-confirm')).toBeNull();
    http.expectNone('/api/backup/restore?replace=true');
  });

  it('uploads the file raw after the confirmation and shows the result', async () => {
    const file = new File(['archive'], 'backup.tar.gz');
    await choose(file);
    (
      el<HTMLButtonElement>('restore-confirm-button') as HTMLButtonElement
    ).click();
    await stable();
    expect(text('restore-progress')).toContain('Uploading the backup: 0%');
    const req = http.expectOne('/api/backup/restore?replace=true');
    expect(req.request.method).toBe('POST');
    expect(req.request.body).toBe(file);
    expect(req.request.headers.get('Content-Type')).toBe('application/gzip');
    expect(req.request.headers.has('X-Backup-Passphrase')).toBe(false);
    req.flush({ ...RESULT, secrets: 'kept' });
    await stable();
    expect(text('restore-result')).toContain(
      'Restored the backup made 2026-03-02 10:15 UTC (MetatronOS 0.1.0): 2 collections and 4 files.',
    );
    expect(text('restore-secrets')).toContain(
      'API keys and tokens of this MetatronOS were kept',
    );
  });

  it("sends the backup's passphrase in a header and says the secrets were restored", async () => {
    await choose(new File(['archive'], 'backup.tar.gz'));
    await type('restore-passphrase', 'correct horse battery');
    (
      el<HTMLButtonElement>('restore-confirm-button') as HTMLButtonElement
    ).click();
    await stable();
    const req = http.expectOne('/api/backup/restore?replace=true');
    expect(req.request.headers.get('X-Backup-Passphrase')).toBe(
      'correct horse battery',
    );
    req.flush({ ...RESULT, secrets: 'restored' });
    await stable();
    expect(text('restore-secrets')).toContain(
      'API keys and tokens of the backup were restored',
    );
  });

  it('shows why a restore was refused', async () => {
    await choose(new File(['junk'], 'notes.txt'));
    (
      el<HTMLButtonElement>('restore-confirm-button') as HTMLButtonElement
    ).click();
    await stable();
    http.expectOne('/api/backup/restore?replace=true').flush(
      {
        statusCode: 400,
        message:
          'This is not a usable MetatronOS backup: it is not a .tar.gz archive. Nothing was changed.',
        error: 'Bad Request',
      },
      { status: 400, statusText: 'Bad Request' },
    );
    await stable();
    expect(text('restore-error')).toContain('it is not a .tar.gz archive');
  });

  it('formats sizes', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(25 * 1024 * 1024)).toBe('25 MB');
  });
});

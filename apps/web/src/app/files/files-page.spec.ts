import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type { FileListing, TodoLists } from '@metatronos/shared-types';
import { setUpApiTest, tearDownApiTest } from '../testing/api-test';
import { FilesPage } from './files-page';

const STATE: FileListing = {
  path: 'file_state_dir',
  entries: [
    {
      name: 'reports',
      kind: 'dir',
      size: 0,
      modifiedAt: '2026-02-09T10:00:00.000Z',
      path: 'file_state_dir/reports',
    },
    {
      name: 'notes.md',
      kind: 'file',
      size: 1536,
      modifiedAt: '2026-02-09T10:00:00.000Z',
      path: 'file_state_dir/notes.md',
    },
  ],
};
const TODO: TodoLists = {
  open: [{ content: 'Call the plumber', createdAt: '2026-02-09 10:00' }],
  done: [],
};

describe('FilesPage', () => {
  let fixture: ComponentFixture<FilesPage>;
  let http: HttpTestingController;

  const root = () => fixture.nativeElement as HTMLElement;
  const all = (testId: string) =>
    Array.from(
      root().querySelectorAll<HTMLElement>(`[data-testid="${testId}"]`),
    );
  const overlay = (testId: string) =>
    document.querySelector<HTMLElement>(`[data-testid="${testId}"]`);
  const stable = () => fixture.whenStable();
  /** The dialog's close waits for its exit animation. */
  const closed = async () => {
    for (
      let i = 0;
      i < 50 && document.querySelector('mat-dialog-container');
      i++
    )
      await new Promise((resolve) => setTimeout(resolve, 10));
    await stable();
  };

  beforeEach(async () => {
    ({ http } = setUpApiTest(FilesPage));
    fixture = TestBed.createComponent(FilesPage);
    fixture.componentRef.setInput('path', 'file_state_dir');
    await stable();
    http.expectOne('/api/files?path=file_state_dir').flush(STATE);
    http.expectOne('/api/files/todo').flush(TODO);
    await stable();
  });
  afterEach(() => tearDownApiTest(http));

  it('lists the entries with sizes and the open TODO items', () => {
    const rows = all('file-entry');
    expect(rows.map((r) => r.getAttribute('data-name'))).toEqual([
      'reports',
      'notes.md',
    ]);
    expect(rows[1].textContent).toContain('1.5 KiB');
    expect(all('todo-open')[0].textContent).toContain('Call the plumber');
    expect(all('file-download')[0].getAttribute('href')).toBe(
      '/api/files/content?path=file_state_dir%2Fnotes.md',
    );
  });

  it('shows a text file in the viewer, or why it cannot', async () => {
    (root().querySelectorAll('.entry-main')[1] as HTMLElement).click();
    await stable();
    http
      .expectOne('/api/files/content?path=file_state_dir/notes.md&inline=1')
      .flush('# Notes');
    await stable();
    expect(all('viewer-text')[0].textContent).toBe('# Notes');

    (root().querySelectorAll('.entry-main')[1] as HTMLElement).click();
    await stable();
    http
      .expectOne('/api/files/content?path=file_state_dir/notes.md&inline=1')
      .flush(
        // A text request gets the error body as text, as the browser hands it over.
        JSON.stringify({
          statusCode: 415,
          message:
            'file_state_dir/notes.md is not a text file; download it instead',
        }),
        { status: 415, statusText: 'Unsupported Media Type' },
      );
    await stable();
    expect(all('viewer-error')[0].textContent).toContain('not a text file');
  });

  it('deletes only once the dialog is confirmed', async () => {
    all('file-delete')[1].click();
    await stable();
    overlay('delete-file-cancel')?.click();
    await closed();
    http.expectNone((r) => r.method === 'DELETE');

    all('file-delete')[1].click();
    await stable();
    expect(overlay('delete-file-text')?.textContent).toContain(
      'file_state_dir/notes.md',
    );
    overlay('delete-file-confirm')?.click();
    await closed();
    const request = http.expectOne(
      (r) => r.method === 'DELETE' && r.url === '/api/files',
    );
    expect(request.request.params.get('path')).toBe('file_state_dir/notes.md');
    request.flush(null, { status: 204, statusText: 'No Content' });
    await stable();
    http.expectOne('/api/files?path=file_state_dir').flush({
      ...STATE,
      entries: STATE.entries.slice(0, 1),
    });
    http.expectOne('/api/files/todo').flush(TODO);
    await stable();
    expect(all('file-entry')).toHaveLength(1);
  });
});

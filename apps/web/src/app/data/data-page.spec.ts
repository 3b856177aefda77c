import { provideHttpClient } from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import { provideRouter } from '@angular/router';
import type {
  CollectionDocumentsPage,
  CollectionInfo,
} from '@metatronos/shared-types';
import { EventStream } from '../core/event-stream';
import { FakeEventStream } from '../testing/fake-event-stream';
import { DOCUMENTS_VIEW_KEY, DataPage, pageRange } from './data-page';

const COLLECTIONS: CollectionInfo[] = [
  { name: 'contacts', count: 93, access: 'read-write' },
  { name: 'messages', count: 1204, access: 'read-only' },
  { name: 'ai_books', count: 0, access: 'read-write' },
];

const docsUrl = (name: string, skip: number) =>
  `/api/data/collections/${name}/documents?limit=20&skip=${skip}`;

function documentsPage(
  skip: number,
  total: number,
  collection = 'contacts',
): CollectionDocumentsPage {
  const count = Math.max(0, Math.min(20, total - skip));
  return {
    collection,
    access: 'read-write',
    total,
    limit: 20,
    skip,
    documents: Array.from({ length: count }, (_, i) => ({
      _id: `id${skip + i + 1}`,
      name: `Person ${skip + i + 1}`,
    })),
  };
}

describe('DataPage', () => {
  let fixture: ComponentFixture<DataPage>;
  let http: HttpTestingController;
  let events: FakeEventStream;

  const root = () => fixture.nativeElement as HTMLElement;
  const el = <T extends HTMLElement = HTMLElement>(testId: string) =>
    root().querySelector<T>(`[data-testid="${testId}"]`);
  const all = (testId: string) =>
    Array.from(
      root().querySelectorAll<HTMLElement>(`[data-testid="${testId}"]`),
    );
  const text = (testId: string) => el(testId)?.textContent?.trim();
  const stable = () => fixture.whenStable();

  async function load(name?: string): Promise<void> {
    fixture = TestBed.createComponent(DataPage);
    if (name) fixture.componentRef.setInput('name', name);
    await stable();
    http.expectOne('/api/data/collections').flush(COLLECTIONS);
    await stable();
  }

  beforeEach(() => {
    events = new FakeEventStream();
    TestBed.configureTestingModule({
      imports: [DataPage],
      providers: [
        provideHttpClient(),
        provideHttpClientTesting(),
        provideRouter([]),
        { provide: EventStream, useValue: events },
      ],
    });
    http = TestBed.inject(HttpTestingController);
  });

  afterEach(() => {
    http.verify();
    localStorage.clear();
  });

  it('lists the collections with their counts, links and a read-only badge for protected ones', async () => {
    await load();
    const items = all('collection-item');
    expect(
      items.map((item) => item.querySelector('.collection-name')?.textContent),
    ).toEqual(['contacts', 'messages', 'ai_books']);
    expect(
      items.map(
        (item) =>
          item.querySelector('[data-testid="collection-count"]')?.textContent,
      ),
    ).toEqual(['93', '1,204', '0']);
    expect(items[0].getAttribute('href')).toBe('/data/contacts');
    expect(
      items[0].querySelector('[data-testid="read-only-badge"]'),
    ).toBeNull();
    expect(
      items[1].querySelector('[data-testid="read-only-badge"]')?.textContent,
    ).toContain('read-only');
    expect(el('no-collection-selected')).not.toBeNull();
  });

  it('shows the documents of the selected collection as JSON text, and pages through them', async () => {
    await load('contacts');
    http.expectOne(docsUrl('contacts', 0)).flush(documentsPage(0, 93));
    await stable();
    expect(all('collection-item')[0].getAttribute('aria-current')).toBe('page');
    expect(all('document-card')).toHaveLength(20);
    expect(all('document-card')[0].querySelector('pre')?.textContent).toBe(
      '{\n  "_id": "id1",\n  "name": "Person 1"\n}',
    );
    expect(text('documents-range')).toBe('1–20 of 93');
    expect(el<HTMLButtonElement>('documents-previous')?.disabled).toBe(true);

    el('documents-next')?.click();
    await stable();
    http.expectOne(docsUrl('contacts', 20)).flush(documentsPage(20, 93));
    await stable();
    expect(text('documents-range')).toBe('21–40 of 93');
    expect(el<HTMLButtonElement>('documents-previous')?.disabled).toBe(false);

    for (const skip of [40, 60, 80]) {
      el('documents-next')?.click();
      await stable();
      http.expectOne(docsUrl('contacts', skip)).flush(documentsPage(skip, 93));
      await stable();
    }
    expect(text('documents-range')).toBe('81–93 of 93');
    expect(el<HTMLButtonElement>('documents-next')?.disabled).toBe(true);

    el('documents-previous')?.click();
    await stable();
    http.expectOne(docsUrl('contacts', 60)).flush(documentsPage(60, 93));
    await stable();
    expect(text('documents-range')).toBe('61–80 of 93');
  });

  it('shows the documents as a table with a column per top-level key, and remembers the choice', async () => {
    await load('contacts');
    const page: CollectionDocumentsPage = {
      ...documentsPage(0, 3),
      documents: [
        { name: 'Ann', _id: 'a1', age: 41 },
        { _id: 'a2', name: 'Bob', tags: ['x', 'y'], active: true },
        { _id: 'a3', note: '<img src=x onerror=alert(1)>', age: null },
      ],
    };
    http.expectOne(docsUrl('contacts', 0)).flush(page);
    await stable();
    expect(el('documents-view-json')?.getAttribute('aria-pressed')).toBe(
      'true',
    );
    expect(el('documents-table')).toBeNull();

    el('documents-view-table')?.click();
    await stable();
    expect(el('documents-view-table')?.getAttribute('aria-pressed')).toBe(
      'true',
    );
    expect(all('document-card')).toHaveLength(0);
    expect(
      all('documents-table-column').map((th) => th.textContent?.trim()),
    ).toEqual(['_id', 'name', 'age', 'tags', 'active', 'note']);
    const rows = all('documents-table-row').map((row) =>
      Array.from(row.querySelectorAll('td')).map((td) =>
        td.textContent?.trim(),
      ),
    );
    expect(rows).toEqual([
      ['a1', 'Ann', '41', '', '', ''],
      ['a2', 'Bob', '', '["x","y"]', 'true', ''],
      ['a3', '', 'null', '', '', '<img src=x onerror=alert(1)>'],
    ]);
    expect(el('documents-table')?.querySelector('img')).toBeNull();
    expect(localStorage.getItem(DOCUMENTS_VIEW_KEY)).toBe('table');

    // The next visit opens as a table; JSON is one click away.
    fixture.destroy();
    await load('contacts');
    http.expectOne(docsUrl('contacts', 0)).flush(page);
    await stable();
    expect(all('documents-table-row')).toHaveLength(3);
    el('documents-view-json')?.click();
    await stable();
    expect(all('document-card')).toHaveLength(3);
    expect(localStorage.getItem(DOCUMENTS_VIEW_KEY)).toBe('json');
  });

  it('never renders document content as HTML', async () => {
    await load('contacts');
    http.expectOne(docsUrl('contacts', 0)).flush({
      ...documentsPage(0, 1),
      documents: [{ note: '<img src=x onerror=alert(1)>' }],
    });
    await stable();
    expect(el('document-card')?.querySelector('img')).toBeNull();
    expect(el('document-card')?.textContent).toContain(
      '<img src=x onerror=alert(1)>',
    );
  });

  it('says when a collection is empty', async () => {
    await load('ai_books');
    http
      .expectOne(docsUrl('ai_books', 0))
      .flush(documentsPage(0, 0, 'ai_books'));
    await stable();
    expect(text('no-documents')).toBe('This collection is empty.');
    expect(text('documents-range')).toBe('0 of 0');
  });

  it('says when the collection does not exist', async () => {
    await load('nope');
    http
      .expectOne(docsUrl('nope', 0))
      .flush(
        { statusCode: 404, message: 'Collection not found' },
        { status: 404, statusText: 'Not Found' },
      );
    await stable();
    expect(text('collection-not-found')).toContain('Collection not found');
  });

  it('starts at the first page of another collection', async () => {
    await load('contacts');
    http.expectOne(docsUrl('contacts', 0)).flush(documentsPage(0, 93));
    await stable();
    el('documents-next')?.click();
    await stable();
    http.expectOne(docsUrl('contacts', 20)).flush(documentsPage(20, 93));
    fixture.componentRef.setInput('name', 'messages');
    await stable();
    http
      .expectOne(docsUrl('messages', 0))
      .flush({ ...documentsPage(0, 2, 'messages'), access: 'read-only' });
    await stable();
    expect(text('documents-range')).toBe('1–2 of 2');
  });

  it('refreshes counts and the open page when the AI writes data', async () => {
    await load('contacts');
    http.expectOne(docsUrl('contacts', 0)).flush(documentsPage(0, 93));
    await stable();

    events.emit('data.changed', {
      collection: 'contacts',
      operation: 'insertOne',
      at: '2026-01-01T00:00:00Z',
    });
    await stable();
    http
      .expectOne('/api/data/collections')
      .flush([{ ...COLLECTIONS[0], count: 94 }, ...COLLECTIONS.slice(1)]);
    http.expectOne(docsUrl('contacts', 0)).flush(documentsPage(0, 94));
    await stable();
    expect(all('collection-count')[0].textContent).toBe('94');
    expect(text('documents-range')).toBe('1–20 of 94');

    // Another collection changed: only the counts.
    events.emit('data.changed', {
      collection: 'ai_books',
      operation: 'insertOne',
      at: '2026-01-01T00:00:01Z',
    });
    await stable();
    http.expectOne('/api/data/collections').flush(COLLECTIONS);
    http.expectNone(docsUrl('contacts', 0));
  });

  it('shows a load error with Retry', async () => {
    fixture = TestBed.createComponent(DataPage);
    await stable();
    http
      .expectOne('/api/data/collections')
      .flush(
        { statusCode: 500, message: 'Boom' },
        { status: 500, statusText: 'Error' },
      );
    await stable();
    expect(text('api-error')).toContain("Couldn't load the collections");
    el('api-error-retry')?.click();
    await stable();
    http.expectOne('/api/data/collections').flush(COLLECTIONS);
    await stable();
    expect(el('api-error')).toBeNull();
    expect(all('collection-item')).toHaveLength(3);
  });
});

describe('pageRange', () => {
  it('formats the shown slice', () => {
    expect(pageRange(20, 20, 93)).toBe('21–40 of 93');
    expect(pageRange(80, 13, 93)).toBe('81–93 of 93');
    expect(pageRange(0, 0, 0)).toBe('0 of 0');
  });
});

import { DecimalPipe } from '@angular/common';
import {
  ChangeDetectionStrategy,
  Component,
  computed,
  effect,
  inject,
  input,
  signal,
  untracked,
} from '@angular/core';
import { takeUntilDestroyed, toObservable } from '@angular/core/rxjs-interop';
import { MatButton } from '@angular/material/button';
import { MatProgressBar } from '@angular/material/progress-bar';
import { RouterLink } from '@angular/router';
import {
  EMPTY,
  Subject,
  catchError,
  finalize,
  skip,
  switchMap,
  tap,
} from 'rxjs';
import {
  type CollectionDocumentsPage,
  type CollectionInfo,
  DATA_DOCUMENTS_DEFAULT_LIMIT,
} from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { EventStream } from '../core/event-stream';
import {
  type ServerProblem,
  errorStatus,
  pageProblem,
} from '../core/server-problem';
import { ServerStatus } from '../core/server-status';
import { Icon } from '../ui/icon';
import { ServerError } from '../ui/server-error';
import { documentTable } from './document-table';

export const DOCUMENTS_PAGE_SIZE = DATA_DOCUMENTS_DEFAULT_LIMIT;

export type DocumentsView = 'json' | 'table';
/** The last view picked is kept in the browser. */
export const DOCUMENTS_VIEW_KEY = 'mt-data-documents-view';

function storedView(): DocumentsView {
  try {
    return globalThis.localStorage?.getItem(DOCUMENTS_VIEW_KEY) === 'table'
      ? 'table'
      : 'json';
  } catch {
    return 'json';
  }
}

/** "21–40 of 93" (en dash), "0 of 0" for an empty collection. */
export function pageRange(skip: number, shown: number, total: number): string {
  if (shown === 0) return `0 of ${total}`;
  return `${skip + 1}–${skip + shown} of ${total}`;
}

interface DocumentCard {
  key: string;
  id: string | null;
  json: string;
}

function toCard(
  document: Record<string, unknown>,
  index: number,
): DocumentCard {
  const id = document['_id'];
  const label =
    typeof id === 'string' || typeof id === 'number' ? String(id) : null;
  return {
    key: `${index}:${label ?? ''}`,
    id: label,
    json: JSON.stringify(document, null, 2),
  };
}

/** `/data` and `/data/:name`: the database collections, and the documents of one, page by page. */
@Component({
  selector: 'mt-data-page',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    DecimalPipe,
    MatButton,
    MatProgressBar,
    RouterLink,
    Icon,
    ServerError,
  ],
  templateUrl: './data-page.html',
  styleUrl: './data-page.scss',
})
export class DataPage {
  private readonly api = inject(ApiClient);
  private readonly reloadCollections$ = new Subject<void>();
  private readonly reloadDocuments$ = new Subject<{
    name: string;
    skip: number;
  }>();

  /** Route parameter: the open collection. */
  readonly name = input<string>();

  protected readonly pageSize = DOCUMENTS_PAGE_SIZE;
  protected readonly collections = signal<CollectionInfo[]>([]);
  protected readonly collectionsLoaded = signal(false);
  protected readonly collectionsLoading = signal(false);
  protected readonly collectionsProblem = signal<ServerProblem | null>(null);

  protected readonly page = signal<CollectionDocumentsPage | null>(null);
  protected readonly skip = signal(0);
  protected readonly documentsLoading = signal(false);
  protected readonly documentsProblem = signal<ServerProblem | null>(null);
  protected readonly notFound = signal(false);

  protected readonly cards = computed(() =>
    (this.page()?.documents ?? []).map(toCard),
  );
  /** JSON cards or a table with one column per top-level key. */
  protected readonly view = signal<DocumentsView>(storedView());
  protected readonly table = computed(() =>
    this.view() === 'table'
      ? documentTable(this.page()?.documents ?? [])
      : null,
  );
  protected readonly range = computed(() => {
    const page = this.page();
    return page ? pageRange(page.skip, page.documents.length, page.total) : '';
  });
  protected readonly hasPrevious = computed(() => (this.page()?.skip ?? 0) > 0);
  protected readonly hasNext = computed(() => {
    const page = this.page();
    return !!page && page.skip + page.documents.length < page.total;
  });
  protected readonly readOnly = computed(
    () => this.page()?.access === 'read-only',
  );

  constructor() {
    this.reloadCollections$
      .pipe(
        switchMap(() => {
          this.collectionsLoading.set(true);
          return this.api.collections().pipe(
            tap((collections) => {
              this.collections.set(collections);
              this.collectionsLoaded.set(true);
              this.collectionsProblem.set(null);
            }),
            catchError((error: unknown) => {
              if (!this.collectionsLoaded())
                this.collectionsProblem.set(
                  pageProblem(error, "Couldn't load the collections"),
                );
              return EMPTY;
            }),
            finalize(() => this.collectionsLoading.set(false)),
          );
        }),
        takeUntilDestroyed(),
      )
      .subscribe();

    this.reloadDocuments$
      .pipe(
        switchMap(({ name, skip }) => {
          this.documentsLoading.set(true);
          return this.api
            .collectionDocuments(name, { limit: DOCUMENTS_PAGE_SIZE, skip })
            .pipe(
              tap((page) => {
                // Documents were removed since: the page we were on is past the end now.
                if (page.documents.length === 0 && skip > 0 && page.total > 0) {
                  this.showPage(
                    Math.floor((page.total - 1) / DOCUMENTS_PAGE_SIZE) *
                      DOCUMENTS_PAGE_SIZE,
                  );
                  return;
                }
                this.page.set(page);
                this.notFound.set(false);
                this.documentsProblem.set(null);
              }),
              catchError((error: unknown) => {
                if (errorStatus(error) === 404) {
                  this.notFound.set(true);
                  this.page.set(null);
                } else {
                  this.documentsProblem.set(
                    pageProblem(error, "Couldn't load the documents"),
                  );
                }
                return EMPTY;
              }),
              finalize(() => this.documentsLoading.set(false)),
            );
        }),
        takeUntilDestroyed(),
      )
      .subscribe();

    // Another collection: start at its first page.
    effect(() => {
      const name = this.name();
      untracked(() => {
        this.page.set(null);
        this.notFound.set(false);
        this.documentsProblem.set(null);
        if (name) this.showPage(0);
      });
    });

    inject(EventStream)
      .on('data.changed')
      .pipe(takeUntilDestroyed())
      .subscribe((event) => {
        this.refreshCollections();
        if (event.collection === this.name()) this.refreshDocuments();
      });

    toObservable(inject(ServerStatus).recovered)
      .pipe(skip(1), takeUntilDestroyed())
      .subscribe(() => this.refresh());

    this.refreshCollections();
  }

  protected showAs(view: DocumentsView): void {
    this.view.set(view);
    try {
      globalThis.localStorage?.setItem(DOCUMENTS_VIEW_KEY, view);
    } catch {
      // Private mode: the choice lasts until the page is left.
    }
  }

  protected refresh(): void {
    this.refreshCollections();
    this.refreshDocuments();
  }

  protected refreshCollections(): void {
    this.reloadCollections$.next();
  }

  protected refreshDocuments(): void {
    const name = this.name();
    if (name) this.reloadDocuments$.next({ name, skip: this.skip() });
  }

  protected previous(): void {
    this.showPage(Math.max(0, this.skip() - DOCUMENTS_PAGE_SIZE));
  }

  protected next(): void {
    this.showPage(this.skip() + DOCUMENTS_PAGE_SIZE);
  }

  private showPage(skip: number): void {
    this.skip.set(skip);
    this.refreshDocuments();
  }
}

import { provideHttpClient } from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import { EventStream } from '../core/event-stream';
import { ServerStatus } from '../core/server-status';
import { emailDraft } from '../testing/account-data';
import { FakeEventStream } from '../testing/fake-event-stream';
import { PendingDrafts } from './pending-drafts';

describe('PendingDrafts', () => {
  let http: HttpTestingController;
  let events: FakeEventStream;

  beforeEach(() => {
    events = new FakeEventStream();
    TestBed.configureTestingModule({
      providers: [
        provideHttpClient(),
        provideHttpClientTesting(),
        { provide: EventStream, useValue: events },
      ],
    });
    http = TestBed.inject(HttpTestingController);
  });

  afterEach(() => http.verify());

  it('counts pending and failed drafts, again on drafts.changed and when the server is back', () => {
    const drafts = TestBed.inject(PendingDrafts);
    drafts.follow();
    drafts.follow();
    http.expectOne('/api/drafts?status=pending').flush([emailDraft('d1')]);
    // An older server without the failed filter: 400, the pending ones still count.
    http
      .expectOne('/api/drafts?status=failed')
      .flush(
        { message: 'status must be pending' },
        { status: 400, statusText: 'Bad Request' },
      );
    expect(drafts.count()).toBe(1);

    events.emit('drafts.changed', {
      id: 'd2',
      change: 'failed',
      at: '2026-11-28T10:00:00.000Z',
    });
    http.expectOne('/api/drafts?status=pending').flush([emailDraft('d1')]);
    http
      .expectOne('/api/drafts?status=failed')
      .flush([emailDraft('d2', { status: 'failed', error: 'Refused' })]);
    expect(drafts.count()).toBe(2);

    TestBed.inject(ServerStatus).recover();
    TestBed.tick();
    http.expectOne('/api/drafts?status=pending').flush([]);
    http.expectOne('/api/drafts?status=failed').flush([]);
    expect(drafts.count()).toBe(0);
  });
});

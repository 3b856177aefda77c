import { provideHttpClient } from '@angular/common/http';
import {
  HttpTestingController,
  provideHttpClientTesting,
} from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import { EventStream } from '../core/event-stream';
import { ServerStatus } from '../core/server-status';
import { pendingAction } from '../testing/action-data';
import { FakeEventStream } from '../testing/fake-event-stream';
import { PendingActions } from './pending-actions';

describe('PendingActions', () => {
  let http: HttpTestingController;
  let events: FakeEventStream;
  const PENDING = '/api/actions?status=pending';

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

  it('counts the pending actions, again on actions.changed, when the stream reopens and when the server is back', () => {
    const actions = TestBed.inject(PendingActions);
    actions.follow();
    actions.follow();
    // A server that ignores the filter: only pending ones count.
    http
      .expectOne(PENDING)
      .flush([
        pendingAction('a1'),
        pendingAction('a2', { status: 'done' }),
        pendingAction('a3', { status: 'expired' }),
      ]);
    expect(actions.count()).toBe(1);

    events.emit('actions.changed', {
      id: 'a4',
      change: 'created',
      chatId: null,
      at: '2026-11-28T10:00:00.000Z',
    });
    http.expectOne(PENDING).flush([pendingAction('a1'), pendingAction('a4')]);
    expect(actions.count()).toBe(2);

    // Events sent while the stream was closed are lost: reopening reloads.
    events.setState('connecting');
    events.setState('open');
    http.expectOne(PENDING).flush([pendingAction('a4')]);
    expect(actions.count()).toBe(1);

    TestBed.inject(ServerStatus).recover();
    TestBed.tick();
    http.expectOne(PENDING).flush([]);
    expect(actions.count()).toBe(0);

    // A failed load keeps the last count.
    actions.set([pendingAction('a5')]);
    events.emit('actions.changed', {
      id: 'a5',
      change: 'updated',
      chatId: null,
      at: '2026-11-28T10:01:00.000Z',
    });
    http
      .expectOne(PENDING)
      .flush({}, { status: 500, statusText: 'Server Error' });
    expect(actions.count()).toBe(1);
  });
});

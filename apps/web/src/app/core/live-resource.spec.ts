import { HttpErrorResponse } from '@angular/common/http';
import { Component, signal } from '@angular/core';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import { Subject } from 'rxjs';
import { FakeEventStream } from '../testing/fake-event-stream';
import { EventStream } from './event-stream';
import { liveResource } from './live-resource';
import { ServerStatus } from './server-status';

const UPDATED = { updatedAt: '2026-01-02T00:00:00.000Z' };

/** Each load is a Subject the test answers by hand. */
let requests: Subject<string>[] = [];

@Component({ template: '' })
class Host {
  readonly value = signal<string | null>(null);
  readonly dirty = signal(false);
  readonly seen: unknown[] = [];
  readonly live = liveResource({
    load: () => {
      const request = new Subject<string>();
      requests.push(request);
      return request;
    },
    apply: (value) => this.value.set(value),
    hasValue: () => this.value() !== null,
    failure: "Couldn't load the thing",
    event: {
      name: 'settings.updated',
      isOwn: (event) => event.updatedAt === 'own',
      seen: (event) => this.seen.push(event),
    },
    dirty: this.dirty,
  });
}

describe('liveResource', () => {
  let fixture: ComponentFixture<Host>;
  let host: Host;
  let events: FakeEventStream;
  let recovered: ReturnType<typeof signal<number>>;

  const last = () => requests[requests.length - 1];
  const answer = (value: string) => {
    last().next(value);
    last().complete();
  };
  const fail = (status: number) =>
    last().error(new HttpErrorResponse({ status }));

  beforeEach(async () => {
    requests = [];
    events = new FakeEventStream();
    recovered = signal(0);
    TestBed.configureTestingModule({
      providers: [
        { provide: EventStream, useValue: events },
        { provide: ServerStatus, useValue: { recovered } },
      ],
    });
    fixture = TestBed.createComponent(Host);
    host = fixture.componentInstance;
    await fixture.whenStable();
  });

  it('loads at once, showing loading until the answer is applied', () => {
    expect(requests).toHaveLength(1);
    expect(host.live.loading()).toBe(true);
    answer('one');
    expect(host.value()).toBe('one');
    expect(host.live.loading()).toBe(false);
    expect(host.live.problem()).toBeNull();
  });

  it('reports a failure only while nothing is loaded, and a reload clears it', () => {
    fail(500);
    expect(host.live.problem()?.title).toBe("Couldn't load the thing");
    expect(host.live.loading()).toBe(false);

    host.live.reload();
    answer('one');
    expect(host.live.problem()).toBeNull();

    host.live.reload();
    fail(500);
    expect(host.live.problem()).toBeNull();
    expect(host.value()).toBe('one');
  });

  it('leaves connectivity failures to the app-wide banner', () => {
    fail(0);
    expect(host.live.problem()).toBeNull();
  });

  it('cancels a running load when reloaded', () => {
    const first = last();
    host.live.reload();
    expect(first.observed).toBe(false);
    answer('two');
    expect(host.value()).toBe('two');
  });

  it('follows the event unless it is our own or there are edits, telling about the others', () => {
    answer('one');
    events.emit('settings.updated', { updatedAt: 'own' });
    expect(requests).toHaveLength(1);
    expect(host.seen).toEqual([]);

    events.emit('settings.updated', UPDATED);
    expect(requests).toHaveLength(2);
    expect(host.seen).toEqual([UPDATED]);

    host.dirty.set(true);
    events.emit('settings.updated', UPDATED);
    expect(requests).toHaveLength(2);
    expect(host.seen).toEqual([UPDATED, UPDATED]);
  });

  it('reloads each time the event stream opens (events sent while it was not open are lost), unless there are edits', () => {
    answer('one');
    events.setState('connecting');
    expect(requests).toHaveLength(1);
    events.setState('open');
    expect(requests).toHaveLength(2);
    answer('two');

    host.dirty.set(true);
    events.setState('connecting');
    events.setState('open');
    expect(requests).toHaveLength(2);
  });

  it('reloads when the server recovers, unless there are edits', async () => {
    answer('one');
    recovered.set(1);
    await fixture.whenStable();
    expect(requests).toHaveLength(2);

    host.dirty.set(true);
    recovered.set(2);
    await fixture.whenStable();
    expect(requests).toHaveLength(2);
  });

  it('asks before leaving with unsaved edits, and stops with the component', () => {
    const unload = () => {
      const event = new Event('beforeunload', { cancelable: true });
      window.dispatchEvent(event);
      return event.defaultPrevented;
    };
    expect(unload()).toBe(false);
    host.dirty.set(true);
    expect(unload()).toBe(true);
    fixture.destroy();
    expect(unload()).toBe(false);
    expect(events.observed).toBe(false);
  });
});

import { EventEmitter } from 'node:events';
import type { ImapFlow } from 'imapflow';
import {
  AccountMailCache,
  BODY_CACHE_ENTRIES,
  BoundedLru,
  ENVELOPE_CACHE_ENTRIES,
  FOLDER_LIST_TTL_MS,
  SESSION_SEARCHES_MAX,
  SessionFlags,
  SessionSearches,
  type CachedBody,
  type CachedEnvelope,
} from './mail-cache';

const envelope = (uid: number, subject = `Subject ${uid}`): CachedEnvelope => ({
  uid,
  messageId: `<m${uid}@example.test>`,
  from: 'ann@example.test',
  to: ['bob@example.test'],
  subject,
  date: null,
});

const body = (uid: number, text: string): CachedBody => ({
  message: {
    ...envelope(uid),
    cc: [],
    replyTo: [],
    text,
    truncated: false,
    attachments: [],
  },
  basis: {
    messageId: null,
    references: [],
    subject: '',
    from: [],
    replyTo: [],
    to: [],
    cc: [],
  },
});

describe('BoundedLru', () => {
  it('drops the least recently used entry beyond its count', () => {
    const lru = new BoundedLru<string>(2, 1_000, (v) => v.length);
    lru.set('a', 'A');
    lru.set('b', 'B');
    expect(lru.get('a')).toBe('A');
    lru.set('c', 'C');
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe('A');
    expect(lru.get('c')).toBe('C');
    expect(lru.size).toBe(2);
  });

  it('drops the oldest entries beyond its weight, and never keeps one heavier than it all', () => {
    const lru = new BoundedLru<string>(100, 10, (v) => v.length);
    lru.set('a', 'xxxx');
    lru.set('b', 'yyyy');
    lru.set('c', 'zzzz');
    expect(lru.get('a')).toBeUndefined();
    expect(lru.weight).toBe(8);
    lru.set('huge', 'w'.repeat(11));
    expect(lru.get('huge')).toBeUndefined();
    expect(lru.weight).toBe(8);
    lru.set('b', 'y');
    expect(lru.weight).toBe(5);
    lru.deleteWhere((key) => key !== 'c');
    expect(lru.size).toBe(1);
    lru.clear();
    expect([lru.size, lru.weight]).toEqual([0, 0]);
  });
});

describe('AccountMailCache', () => {
  const at = (path: string, uidValidity: string, uid: number) => ({
    path,
    uidValidity,
    uid,
  });

  it('keeps a message by folder, UIDVALIDITY and UID only', () => {
    const cache = new AccountMailCache();
    cache.selected('INBOX', '7');
    cache.setEnvelope(at('INBOX', '7', 1), envelope(1));
    cache.setBody(at('INBOX', '7', 1), body(1, 'hello'));
    expect(cache.envelope(at('INBOX', '7', 1))).toEqual(envelope(1));
    expect(cache.body(at('INBOX', '7', 1))?.message.text).toBe('hello');
    expect(cache.envelope(at('Archive', '7', 1))).toBeUndefined();
    expect(cache.envelope(at('INBOX', '8', 1))).toBeUndefined();
    expect(cache.envelope(at('INBOX', '7', 2))).toBeUndefined();
  });

  it('drops a folder’s messages when it is selected with another UIDVALIDITY, and only that folder’s', () => {
    const cache = new AccountMailCache();
    cache.selected('INBOX', '7');
    cache.selected('INBOX/Sub', '7');
    cache.setEnvelope(at('INBOX', '7', 1), envelope(1));
    cache.setBody(at('INBOX', '7', 1), body(1, 'old'));
    cache.setEnvelope(at('INBOX/Sub', '7', 1), envelope(1, 'other folder'));
    cache.selected('INBOX', '7');
    expect(cache.envelope(at('INBOX', '7', 1))).toBeDefined();
    cache.selected('INBOX', '9');
    expect(cache.usage()).toMatchObject({ envelopes: 1, bodies: 0 });
    expect(cache.envelope(at('INBOX/Sub', '7', 1))?.subject).toBe(
      'other folder',
    );
  });

  it('forgets moved messages, and everything on clear', () => {
    const cache = new AccountMailCache();
    cache.setEnvelope(at('INBOX', '7', 1), envelope(1));
    cache.setEnvelope(at('INBOX', '7', 2), envelope(2));
    cache.setBody(at('INBOX', '7', 1), body(1, 'x'));
    cache.forget([at('INBOX', '7', 1)]);
    expect(cache.usage()).toMatchObject({ envelopes: 1, bodies: 0 });
    cache.setFolders(['INBOX']);
    cache.clear();
    expect(cache.usage()).toEqual({ envelopes: 0, bodies: 0, chars: 0 });
    expect(cache.folders()).toBeNull();
  });

  it('trusts the folder list for a short time only', () => {
    let now = 1_000;
    const cache = new AccountMailCache(() => now);
    cache.setFolders(['INBOX', 'Archive']);
    now += FOLDER_LIST_TTL_MS - 1;
    expect(cache.folders()).toEqual(['INBOX', 'Archive']);
    now += 1;
    expect(cache.folders()).toBeNull();
    cache.setFolders(['INBOX']);
    cache.forgetFolders();
    expect(cache.folders()).toBeNull();
  });

  it('is bounded: envelopes and bodies by count and by characters', () => {
    const cache = new AccountMailCache();
    for (let uid = 1; uid <= ENVELOPE_CACHE_ENTRIES + 10; uid++)
      cache.setEnvelope(at('INBOX', '1', uid), envelope(uid));
    for (let uid = 1; uid <= BODY_CACHE_ENTRIES + 10; uid++)
      cache.setBody(at('INBOX', '1', uid), body(uid, 'x'.repeat(20_000)));
    const usage = cache.usage();
    expect(usage.envelopes).toBe(ENVELOPE_CACHE_ENTRIES);
    expect(usage.bodies).toBeLessThanOrEqual(BODY_CACHE_ENTRIES);
    // The newest are the ones kept.
    expect(cache.envelope(at('INBOX', '1', 1))).toBeUndefined();
    expect(
      cache.envelope(at('INBOX', '1', ENVELOPE_CACHE_ENTRIES + 10)),
    ).toBeDefined();
    expect(usage.chars).toBeLessThanOrEqual(2_500_000);
  });
});

/** Stands in for an ImapFlow: its selected mailbox object and its events. */
function fakeClient() {
  const client = new EventEmitter() as EventEmitter & {
    mailbox: { path: string } | false;
  };
  client.mailbox = false;
  return client;
}

describe('SessionFlags', () => {
  const flagsOf = (client: ReturnType<typeof fakeClient>) =>
    new SessionFlags(client as unknown as ImapFlow);

  it('knows flags only for the folder selected now, in the selection they were learned in', () => {
    const client = fakeClient();
    const flags = flagsOf(client);
    flags.remember('INBOX', 1, ['\\Seen']);
    expect(flags.get('INBOX', 1)).toBeUndefined();
    client.mailbox = { path: 'INBOX' };
    flags.remember('INBOX', 1, ['\\Seen']);
    expect(flags.get('INBOX', 1)).toEqual(['\\Seen']);
    expect(flags.get('Archive', 1)).toBeUndefined();
    // A new SELECT of the same folder: what was known belongs to the old one.
    client.mailbox = { path: 'INBOX' };
    expect(flags.get('INBOX', 1)).toBeUndefined();
    flags.remember('INBOX', 1, ['\\Seen']);
    client.mailbox = false;
    expect(flags.get('INBOX', 1)).toBeUndefined();
  });

  it('follows the server’s flag updates; one without a UID forgets them all', () => {
    const client = fakeClient();
    client.mailbox = { path: 'INBOX' };
    const flags = flagsOf(client);
    flags.remember('INBOX', 1, ['\\Seen']);
    flags.remember('INBOX', 2, []);
    client.emit('flags', {
      path: 'INBOX',
      uid: 2,
      seq: 2,
      flags: new Set(['\\Flagged']),
    });
    expect(flags.get('INBOX', 2)).toEqual(['\\Flagged']);
    client.emit('flags', { path: 'Archive', uid: 1, seq: 1, flags: new Set() });
    expect(flags.get('INBOX', 1)).toEqual(['\\Seen']);
    client.emit('flags', { path: 'INBOX', seq: 1, flags: new Set() });
    expect(flags.get('INBOX', 1)).toBeUndefined();
    expect(flags.get('INBOX', 2)).toBeUndefined();
  });

  it('answers copies: a caller cannot change what it knows', () => {
    const client = fakeClient();
    client.mailbox = { path: 'INBOX' };
    const flags = flagsOf(client);
    const given = ['\\Seen'];
    flags.remember('INBOX', 1, given);
    given.push('\\Flagged');
    flags.get('INBOX', 1)?.push('\\Deleted');
    expect(flags.get('INBOX', 1)).toEqual(['\\Seen']);
  });
});

describe('SessionSearches', () => {
  const searchesOf = (client: ReturnType<typeof fakeClient>) =>
    new SessionSearches(client as unknown as ImapFlow);

  it('keeps results until a message comes or goes in the selected folder', () => {
    const client = fakeClient();
    client.mailbox = { path: 'INBOX' };
    const searches = searchesOf(client);
    searches.remember('INBOX', 'all', [3, 2, 1]);
    expect(searches.get('INBOX', 'all')).toEqual([3, 2, 1]);
    expect(searches.get('Archive', 'all')).toBeUndefined();
    client.emit('exists', { path: 'Archive', count: 9, prevCount: 8 });
    expect(searches.get('INBOX', 'all')).toEqual([3, 2, 1]);
    client.emit('exists', { path: 'INBOX', count: 4, prevCount: 3 });
    expect(searches.get('INBOX', 'all')).toBeUndefined();
    searches.remember('INBOX', 'all', [4, 3, 2, 1]);
    client.emit('expunge', { path: 'INBOX', seq: 2 });
    expect(searches.get('INBOX', 'all')).toBeUndefined();
    searches.remember('INBOX', 'all', [4, 3, 1]);
    client.mailbox = { path: 'INBOX' };
    expect(searches.get('INBOX', 'all')).toBeUndefined();
  });

  it('keeps the last few only', () => {
    const client = fakeClient();
    client.mailbox = { path: 'INBOX' };
    const searches = searchesOf(client);
    for (let i = 0; i <= SESSION_SEARCHES_MAX; i++)
      searches.remember('INBOX', `q${i}`, [i]);
    expect(searches.get('INBOX', 'q0')).toBeUndefined();
    expect(searches.get('INBOX', `q${SESSION_SEARCHES_MAX}`)).toEqual([
      SESSION_SEARCHES_MAX,
    ]);
  });
});

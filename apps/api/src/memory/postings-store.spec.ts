import MiniSearch from 'minisearch';
import { DocTable } from './doc-table';
import { PostingsStore } from './postings-store';
import { RankedSearch } from './ranked-search';
import {
  readSnapshot,
  snapshotPieces,
  SNAPSHOT_VERSION,
} from './snapshot-writer';
import { indexTerm, words } from './word-forms';

/** The index as it was: MiniSearch with the memory index's term pipeline, searched as `RankedSearch` searches. */
const OPTIONS = {
  fields: ['text'],
  storeFields: [] as string[],
  tokenize: (text: string) => words(text),
  processTerm: (term: string) => indexTerm(term),
};
const VOCABULARY = (
  'anna allergy allergic allergies peanuts dentist moved moving hamburg lisbon cabin key keys violin ' +
  'cello gym membership members price coffee morning lunch clara weekend garden gardening train ' +
  'strike bill report zürich café the and of'
).split(' ');
const QUERIES = [
  'Anna allergy',
  'allergic peanuts',
  'allergies',
  'coffee morning lunch',
  'clara clara',
  'lisbn',
  'alergy',
  'membr',
  'garde',
  'violin cello key',
  'zürich',
  'w17 w3',
  'nothing matches this',
];
const prefix = (term: string) => term.length >= 4;
const fuzzy = (term: string) => (term.length >= 5 ? 0.2 : false);
const weights = { prefix: 0.5, fuzzy: 0.4 };
const termsOf = (query: string) =>
  words(query)
    .map((w) => indexTerm(w))
    .filter((t): t is string => !!t);

function random(seed: number): () => number {
  let n = seed;
  return () => {
    n = (n * 1103515245 + 12345) % 2 ** 31;
    return n / 2 ** 31;
  };
}

function text(next: () => number): string {
  return Array.from({ length: 1 + Math.floor(next() * 14) }, () =>
    // Now and then a rare word: many short runs, moved as they grow.
    next() < 0.15
      ? `w${Math.floor(next() * 400)}`
      : VOCABULARY[Math.floor(next() * next() * VOCABULARY.length)],
  ).join(' ');
}

/** Every match of `query` in the store, slot → score and terms. */
function ranked(
  store: PostingsStore,
  query: string,
): Map<number, { score: number; terms: string[] }> {
  const hits = new RankedSearch().rank(store, {
    terms: termsOf(query),
    top: 100_000,
    prefix,
    fuzzy,
    weights,
    accept: () => true,
  });
  return new Map(hits.map((h) => [h.id, { score: h.score, terms: h.terms }]));
}

/** The same query on a MiniSearch built afresh from `docs`: what the store must give. */
function expectSameAsMiniSearch(
  store: PostingsStore,
  docs: Map<number, string>,
): void {
  const mini = new MiniSearch<{ id: number; text: string }>(OPTIONS);
  mini.addAll([...docs].map(([id, text]) => ({ id, text })));
  expect(store.documentCount).toBe(mini.documentCount);
  for (const query of QUERIES) {
    const expected = mini.search(query, { prefix, fuzzy, weights });
    const got = ranked(store, query);
    expect([...got.keys()].sort((a, b) => a - b)).toEqual(
      expected.map((r) => r.id as number).sort((a, b) => a - b),
    );
    for (const result of expected) {
      const hit = got.get(result.id as number);
      expect(hit?.score).toBeCloseTo(result.score, 9);
      expect([...(hit?.terms ?? [])].sort()).toEqual(
        [...result.queryTerms].sort(),
      );
    }
  }
}

async function snapshotBytes(
  store: PostingsStore,
  keep: (slot: number) => boolean,
): Promise<Buffer> {
  const table = new DocTable();
  table.setMessage('a', 'c', 1.5, true, true);
  table.setMessage('bé', 'c2', 1_700_000_000_000, false, false);
  const pieces: Buffer[] = [];
  // A piece is valid until the next is asked for: copied.
  for await (const piece of snapshotPieces(
    { seq: 7, token: 'tok', secrets: 'sec' },
    table,
    store,
    keep,
  ))
    pieces.push(Buffer.from(piece));
  return Buffer.concat(pieces);
}

describe('PostingsStore', () => {
  it('after random adds, replaces and discards (slots reused, sweeps on the way) scores every query as MiniSearch built afresh', () => {
    const next = random(42);
    const store = new PostingsStore();
    const docs = new Map<number, string>();
    let sweeps = 0;
    for (let step = 1; step <= 6000; step++) {
      const slot = Math.floor(next() * 1500);
      const roll = next();
      const dead = store.dead;
      if (roll < 0.25 && docs.has(slot)) {
        store.discard(slot);
        docs.delete(slot);
      } else {
        // A new document, or a replaced one (an edited note, a message read again).
        const body = text(next);
        store.add(slot, body);
        docs.set(slot, body);
      }
      if (dead > 0 && store.dead === 0) sweeps++;
      if (step % 1500 === 0) expectSameAsMiniSearch(store, docs);
    }
    expect(sweeps).toBeGreaterThan(0);
    store.sweep();
    expectSameAsMiniSearch(store, docs);
  });

  it('a snapshot written and loaded gives the same results, without the documents left out or discarded', async () => {
    const next = random(7);
    const store = new PostingsStore();
    const docs = new Map<number, string>();
    for (let slot = 0; slot < 2000; slot++) {
      const body = text(next);
      store.add(slot, body);
      docs.set(slot, body);
    }
    // Discarded since the last sweep: their postings are still in the pools.
    for (let slot = 0; slot < 2000; slot += 40) {
      store.discard(slot);
      docs.delete(slot);
    }
    expect(store.dead).toBeGreaterThan(0);
    // Left out: the notes (read from the database at each start).
    const keep = (slot: number) => slot % 7 !== 0;
    const bytes = await snapshotBytes(store, keep);
    const loaded = readSnapshot(bytes);
    expect(loaded?.head).toEqual({
      version: SNAPSHOT_VERSION,
      seq: 7,
      token: 'tok',
      secrets: 'sec',
      newest: 'bé',
      messages: {
        slots: Uint32Array.from([0, 1]),
        // A user's message with text; another's without.
        flags: Uint8Array.from([13, 1]),
        dates: Float64Array.from([1.5, 1_700_000_000_000]),
        chats: Int32Array.from([0, 1]),
        ids: ['a', 'bé'],
        chatIds: ['c', 'c2'],
      },
    });
    const kept = new Map([...docs].filter(([slot]) => keep(slot)));
    const restored = loaded?.store as PostingsStore;
    expectSameAsMiniSearch(restored, kept);
    // The loaded store follows writes as the first did.
    restored.add(7, 'anna moved to lisbon');
    kept.set(7, 'anna moved to lisbon');
    restored.add(1, 'violin lessons');
    kept.set(1, 'violin lessons');
    restored.discard(2);
    kept.delete(2);
    expectSameAsMiniSearch(restored, kept);
  });

  it('refuses a snapshot cut short or of another version, and does not take version 1 JSON for one', async () => {
    const store = new PostingsStore();
    store.add(1, 'anna allergy peanuts');
    store.add(2, 'the cabin key');
    const bytes = await snapshotBytes(store, () => true);
    expect(readSnapshot(bytes)?.store.documentCount).toBe(2);
    for (const cut of [bytes.length - 1, bytes.length - 13, 30, 10])
      expect(() => readSnapshot(bytes.subarray(0, cut))).toThrow();
    const other = Buffer.from(bytes);
    other.writeUInt32LE(SNAPSHOT_VERSION + 1, 4);
    expect(readSnapshot(other)).toBeNull();
    expect(
      readSnapshot(
        Buffer.from(JSON.stringify({ version: 1, seq: 0, mini: {} })),
      ),
    ).toBeNull();
  });
});

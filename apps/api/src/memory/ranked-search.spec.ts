import MiniSearch from 'minisearch';
import { PostingsStore } from './postings-store';
import { RankedSearch } from './ranked-search';
import { indexTerm, words } from './word-forms';

const OPTIONS = {
  fields: ['text'],
  storeFields: [],
  tokenize: (text: string) => words(text),
  processTerm: (term: string) => indexTerm(term),
};
const VOCABULARY =
  'anna allergy allergic peanuts dentist moved hamburg lisbon cabin key violin cello gym membership price coffee morning lunch clara weekend garden train strike bill report'.split(
    ' ',
  );

function corpus(
  count: number,
  seed: number,
): Array<{ id: number; text: string }> {
  let n = seed;
  const next = () => {
    n = (n * 1103515245 + 12345) % 2 ** 31;
    return n / 2 ** 31;
  };
  return Array.from({ length: count }, (_, id) => ({
    id,
    text: Array.from(
      { length: 2 + Math.floor(next() * 12) },
      () => VOCABULARY[Math.floor(next() * next() * VOCABULARY.length)],
    ).join(' '),
  }));
}

const QUERIES = [
  'Anna allergy',
  'allergic peanuts',
  'coffee morning lunch',
  'clara clara',
  'lisbn',
  'membr',
  'violin cello key',
  'nothing matches this',
];
const prefix = (term: string) => term.length >= 4;
const fuzzy = (term: string) => (term.length >= 5 ? 0.2 : false);
const weights = { prefix: 0.5, fuzzy: 0.4 };
const termsOf = (query: string) =>
  words(query)
    .map((w) => indexTerm(w))
    .filter((t): t is string => !!t);

function storeOf(docs: Array<{ id: number; text: string }>): PostingsStore {
  const store = new PostingsStore();
  for (const doc of docs) store.add(doc.id, doc.text);
  return store;
}

describe('RankedSearch', () => {
  it.each(QUERIES)(
    'scores "%s" as MiniSearch#search does, best first, with prefixes and typos',
    (query) => {
      const mini = new MiniSearch<{ id: number; text: string }>(OPTIONS);
      mini.addAll(corpus(3000, 5));
      const expected = mini.search(query, { prefix, fuzzy, weights });
      const got = new RankedSearch().rank(storeOf(corpus(3000, 5)), {
        terms: termsOf(query),
        top: 50,
        prefix,
        fuzzy,
        weights,
        accept: () => true,
      });
      expect(got).toHaveLength(Math.min(50, expected.length));
      const byId = new Map(expected.map((r) => [r.id as number, r]));
      for (const [i, hit] of got.entries()) {
        // Equal scores may come in another order: compare each hit with MiniSearch's own score for it.
        expect(hit.score).toBeCloseTo(expected[i].score, 9);
        expect(byId.get(hit.id as number)?.score).toBeCloseTo(hit.score, 9);
        expect([...hit.terms].sort()).toEqual(
          [...(byId.get(hit.id as number)?.queryTerms ?? [])].sort(),
        );
      }
    },
  );

  it('offers accept only the documents that can enter the top, and returns only accepted ones', () => {
    const mini = new MiniSearch<{ id: number; text: string }>(OPTIONS);
    mini.addAll(corpus(3000, 9));
    const even = (id: unknown) => (id as number) % 2 === 0;
    const expected = mini.search('coffee lunch', {
      prefix,
      weights,
      filter: (r) => even(r.id),
    });
    let asked = 0;
    const got = new RankedSearch().rank(storeOf(corpus(3000, 9)), {
      terms: termsOf('coffee lunch'),
      top: 10,
      prefix,
      fuzzy: () => false,
      weights,
      accept: (id) => {
        asked++;
        return even(id);
      },
    });
    expect(got.map((h) => h.score)).toEqual(
      expected.slice(0, 10).map((r) => r.score),
    );
    expect(got.every((h) => even(h.id))).toBe(true);
    // Not every match: those that cannot beat the tenth best are never offered.
    expect(asked).toBeLessThan(
      mini.search('coffee lunch', { prefix, weights }).length,
    );
  });

  it('skips discarded documents before the store sweeps them, scoring as an index without them', () => {
    const docs = corpus(2000, 13);
    const store = storeOf(docs);
    // One in twenty: under the share that starts a sweep, so their postings stay.
    for (let id = 0; id < 2000; id += 20) store.discard(id);
    expect(store.dead).toBe(100);
    const fresh = new MiniSearch<{ id: number; text: string }>(OPTIONS);
    fresh.addAll(docs.filter((d) => d.id % 20 !== 0));
    const query = 'anna allergy garden';
    const expected = fresh.search(query, { prefix, fuzzy, weights });
    const ranking = new RankedSearch();
    const run = () =>
      ranking.rank(store, {
        terms: termsOf(query),
        top: 30,
        prefix,
        fuzzy,
        weights,
        accept: () => true,
      });
    const dirty = run();
    const byId = new Map(expected.map((r) => [r.id as number, r.score]));
    expect(dirty).toHaveLength(30);
    for (const [i, hit] of dirty.entries()) {
      expect(hit.score).toBeCloseTo(expected[i].score, 9);
      expect(byId.get(hit.id)).toBeCloseTo(hit.score, 9);
    }
    expect(dirty.some((h) => h.id % 20 === 0)).toBe(false);
    store.sweep();
    expect(store.dead).toBe(0);
    expect(run()).toEqual(dirty);
  });
});

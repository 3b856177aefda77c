import MiniSearch from 'minisearch';
import { snapshotPieces } from './snapshot-writer';

type Doc = { id: number; text: string };
const OPTIONS = { fields: ['text'], storeFields: [] as string[] };

function docs(count: number): Doc[] {
  // Not only ASCII: terms are written as UTF-8 bytes.
  const words = ['anna', 'peanut', 'lisbon', 'violin', 'zürich', 'café'];
  return Array.from({ length: count }, (_, id) => ({
    id,
    // "every" is in every document: a term whose postings span many slices.
    text: `every ${words[id % words.length]} ${words[(id * 7) % words.length]} word${id}`,
  }));
}

describe('snapshotPieces', () => {
  it('writes JSON that loads into the index without the left-out documents, scoring as if they had never been added', async () => {
    const all = docs(6000);
    const mini = new MiniSearch<Doc>(OPTIONS);
    mini.addAll(all);
    // A discarded and vacuumed document, as the index has after edits.
    mini.discard(5);
    await mini.vacuum();
    // And one discarded since, its postings still in the index (the writer leaves them out).
    mini.discard(8);
    const keep = (id: unknown) => (id as number) % 7 !== 0;
    const head = {
      version: 1,
      seq: 3,
      token: 'tok',
      secrets: 'sec',
      newest: null,
      messages: {
        slots: [1, 2],
        flags: [1, 1],
        dates: [0, 0],
        chats: [0, 0],
        ids: ['a', 'b'],
        chatIds: ['c'],
      },
    };
    const pieces: Buffer[] = [];
    // A piece is valid until the next is asked for: copied.
    for await (const piece of snapshotPieces(head, mini, keep))
      pieces.push(Buffer.from(piece));
    expect(pieces.length).toBeGreaterThan(1);
    const text = Buffer.concat(pieces).toString('utf8');
    const parsed = JSON.parse(text) as typeof head & {
      mini: Parameters<typeof MiniSearch.loadJS>[0];
    };
    expect({ ...parsed, mini: undefined }).toEqual({
      ...head,
      mini: undefined,
    });
    // Nothing of the discarded document is written: its own word is gone, and no dirt is left.
    expect(text).not.toContain('"word8"');
    expect(text).toContain('"word9"');
    expect(parsed.mini.dirtCount).toBe(0);
    const loaded = MiniSearch.loadJS<Doc>(parsed.mini, OPTIONS);
    const expected = new MiniSearch<Doc>(OPTIONS);
    expected.addAll(all.filter((d) => keep(d.id) && d.id !== 5 && d.id !== 8));
    expect(loaded.documentCount).toBe(expected.documentCount);
    for (const query of [
      'every',
      'anna lisbon',
      'word14',
      'word21',
      'violin',
      'zürich café',
    ])
      expect(
        loaded.search(query).map((r) => [r.id, r.score.toFixed(9)]),
      ).toEqual(expected.search(query).map((r) => [r.id, r.score.toFixed(9)]));
  });
});

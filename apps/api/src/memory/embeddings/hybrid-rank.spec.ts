import type { IndexHit } from '../memory-index';
import { fuseHits } from './hybrid-rank';

const hit = (
  id: string,
  date: number,
  kind: 'note' | 'message' = 'message',
): IndexHit => ({
  kind,
  id,
  chatId: 'c',
  date,
  score: 1,
});

describe('fuseHits (reciprocal rank fusion)', () => {
  const dates: Record<string, number> = {
    a: 1,
    b: 2,
    c: 3,
    d: 4,
    old: 1,
    new: 2,
  };
  const context = (successors: Record<string, string> = {}) => ({
    describe: (_kind: 'note' | 'message', id: string) =>
      id in dates ? { chatId: 'c', date: dates[id] } : null,
    successorOf: (id: string) => successors[id] ?? null,
    limit: 10,
  });

  it('ranks a hit both lists hold above one found by a single list, and adds vector-only hits', () => {
    const out = fuseHits(
      [hit('a', 1), hit('b', 2)],
      [
        { kind: 'message', id: 'c', similarity: 0.9 },
        { kind: 'message', id: 'b', similarity: 0.8 },
      ],
      context(),
    );
    expect(out.map((h) => h.id)).toEqual(['b', 'c', 'a']);
    expect(out[0].score).toBeCloseTo(60 / 62 + 60 / 62, 6);
    expect(out[1]).toMatchObject({ chatId: 'c', date: 3 });
  });

  it('gives a tie to the newer hit', () => {
    const out = fuseHits(
      [hit('old', 1), hit('new', 2)],
      [
        { kind: 'message', id: 'new', similarity: 0.9 },
        { kind: 'message', id: 'old', similarity: 0.8 },
      ],
      context(),
    );
    expect(out.map((h) => h.id)).toEqual(['new', 'old']);
  });

  it('keeps a superseded note below the note that replaced it', () => {
    const out = fuseHits(
      [hit('old', 1, 'note')],
      [
        { kind: 'note', id: 'old', similarity: 0.9 },
        { kind: 'note', id: 'new', similarity: 0.5 },
      ],
      context({ old: 'new' }),
    );
    expect(out.map((h) => h.id)).toEqual(['new', 'old']);
  });

  it('drops a vector hit the index no longer knows, and cuts to the limit', () => {
    const out = fuseHits(
      [hit('a', 1), hit('b', 2), hit('c', 3)],
      [{ kind: 'note', id: 'gone', similarity: 1 }],
      { ...context(), limit: 2 },
    );
    expect(out.map((h) => h.id)).toEqual(['a', 'b']);
  });
});

import { keepSuccessorsFirst, type IndexHit } from '../memory-index';

/** Reciprocal rank fusion's constant (the usual 60: a list's top ranks matter, its tail little). */
const RRF_K = 60;
/** Fused scores this close are a tie, which the newer hit wins (ranks swapped between the lists). */
const TIE_RATIO = 0.995;

export interface VectorHit {
  kind: 'note' | 'message';
  id: string;
  similarity: number;
}

export interface FusionContext {
  /** A vector-only hit's chat and date (from the index). */
  describe(
    kind: 'note' | 'message',
    id: string,
  ): { chatId: string | null; date: number } | null;
  successorOf(noteId: string): string | null;
  limit: number;
}

/**
 * Keyword hits (best first) and vector neighbours (best first) fused by reciprocal rank:
 * each hit scores Σ 60 / (60 + rank) over the lists it is in (1 for the top of one list,
 * about 2 for the top of both). Near ties go to the newer hit, and a superseded note never
 * ranks above the note that replaced it.
 */
export function fuseHits(
  keyword: readonly IndexHit[],
  vector: readonly VectorHit[],
  context: FusionContext,
): IndexHit[] {
  const fused = new Map<string, IndexHit>();
  const add = (
    kind: 'note' | 'message',
    id: string,
    rank: number,
    hit?: IndexHit,
  ) => {
    const key = `${kind}:${id}`;
    const score = RRF_K / (RRF_K + rank + 1);
    const known = fused.get(key);
    if (known) {
      known.score += score;
      return;
    }
    const where = hit ?? context.describe(kind, id);
    if (!where) return;
    fused.set(key, {
      kind,
      id,
      chatId: where.chatId,
      date: where.date,
      score,
      ...(hit?.terms ? { terms: hit.terms } : {}),
    });
  };
  keyword.forEach((hit, rank) => add(hit.kind, hit.id, rank, hit));
  vector.forEach((hit, rank) => add(hit.kind, hit.id, rank));
  const sorted = [...fused.values()].sort(
    (a, b) => b.score - a.score || b.date - a.date,
  );
  const ordered: IndexHit[] = [];
  const head = sorted.slice(0, context.limit * 3);
  while (head.length) {
    let pick = 0;
    for (let i = 1; i < head.length; i++) {
      if (head[i].score < head[0].score * TIE_RATIO) break;
      if (head[i].date > head[pick].date) pick = i;
    }
    ordered.push(...head.splice(pick, 1));
  }
  return keepSuccessorsFirst(ordered, (id) => context.successorOf(id)).slice(
    0,
    context.limit,
  );
}

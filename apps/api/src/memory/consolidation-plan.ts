import type { MemoryRunChange } from '@metatronos/shared-types';
import { indexTerm, words } from './word-forms';

/** What a plan needs of a note. */
export interface PlannedNote {
  id: string;
  text: string;
  source: string;
  status: string;
  observedAt: Date;
  expiresAt: Date | null;
}

export interface ConsolidationPlan {
  /** Each group of duplicates: the note kept (the newest) and those merged into it. */
  merges: Array<{ keep: PlannedNote; drop: PlannedNote[] }>;
  expired: PlannedNote[];
  changes: MemoryRunChange[];
  /** Set when the plan must not run: it would remove too much. */
  refusal: string | null;
}

/** A run that would remove more than this share of the notes is refused (nothing is changed). */
export const MAX_REMOVED_SHARE = 0.25;

/** The words of a note as a set key: "Anna is allergic to peanuts" and "anna: allergic to peanuts!" meet. */
export function duplicateKey(text: string): string {
  const terms = new Set(
    words(text)
      .map(indexTerm)
      .filter((t): t is string => !!t),
  );
  return [...terms].sort().join(' ');
}

/**
 * The nightly consolidation as a pure decision: duplicates (the same words once
 * word forms and common words are left out) merge into the newest, keeping every
 * source; expired notes are dropped. Proposals are left for the owner. Every change
 * has a reason and the text it replaces; a plan removing more than MAX_REMOVED_SHARE
 * of the notes is refused.
 */
export function planConsolidation(
  notes: readonly PlannedNote[],
  now: Date,
): ConsolidationPlan {
  const expired = notes.filter(
    (n) => n.expiresAt !== null && n.expiresAt.getTime() <= now.getTime(),
  );
  const expiredIds = new Set(expired.map((n) => n.id));
  const groups = new Map<string, PlannedNote[]>();
  for (const note of notes) {
    if (note.status !== 'active' || expiredIds.has(note.id)) continue;
    const key = duplicateKey(note.text);
    if (!key) continue;
    const group = groups.get(key);
    if (group) group.push(note);
    else groups.set(key, [note]);
  }
  const merges: ConsolidationPlan['merges'] = [];
  const changes: MemoryRunChange[] = [];
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    const sorted = [...group].sort(
      (a, b) => b.observedAt.getTime() - a.observedAt.getTime(),
    );
    const [keep, ...drop] = sorted;
    merges.push({ keep, drop });
    for (const note of drop)
      changes.push({
        noteId: note.id,
        action: 'merged',
        reason: `duplicate of note ${keep.id} ("${keep.text.slice(0, 80)}"), merged into it with its source (${note.source}, ${note.observedAt.toISOString().slice(0, 10)})`,
        prior: note.text,
      });
  }
  for (const note of expired)
    changes.push({
      noteId: note.id,
      action: 'expired',
      reason: `expired on ${note.expiresAt?.toISOString().slice(0, 10)}`,
      prior: note.text,
    });
  const removed = changes.length;
  const refusal =
    notes.length > 0 && removed / notes.length > MAX_REMOVED_SHARE
      ? `The run would remove ${removed} of ${notes.length} notes (more than a quarter); nothing was changed.`
      : null;
  return { merges, expired, changes, refusal };
}

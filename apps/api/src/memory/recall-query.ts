import { indexTerm, words } from './word-forms';

/**
 * When recall asks for the owner's message's embedding: the rules that keep a paid,
 * 100–300 ms provider call off the turns where a vector cannot change what is recalled.
 */

/**
 * Replies and greetings with no subject of their own ("ok thanks", "yes please", "hi!"):
 * what the keyword side already ignores (the index's stop words) plus the chat's small talk.
 */
const SMALL_TALK = new Set(
  (
    'ok okay k yes yeah yep yup no nope nah sure fine thanks thank thx ty please pls ' +
    'hi hello hey hiya bye goodbye cheers great cool nice good perfect awesome lol haha ' +
    'right alright got it agreed done go ahead continue more again'
  ).split(' '),
);

/** Scripts written without spaces between words: a run of them is a whole phrase. */
const SPACELESS =
  /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]+$/u;

/** Content words a message needs before its meaning is worth an embedding. */
export const MIN_MEANINGFUL_TERMS = 2;
/** A hit matching this many of the message's content words is strong even if it misses others. */
const STRONG_MATCHED_TERMS = 3;

/**
 * The message's content words as the index sees them (word forms, no stop words, no small
 * talk, no bare numbers), each once: what a keyword hit's matched terms are compared with.
 */
export function meaningfulTerms(message: string): string[] {
  const terms = new Set<string>();
  for (const word of words(message)) {
    const lower = word.toLowerCase();
    if (SMALL_TALK.has(lower) || !/\p{L}/u.test(lower)) continue;
    const term = indexTerm(lower);
    if (term && (term.length >= 2 || SPACELESS.test(term))) terms.add(term);
  }
  return [...terms];
}

/**
 * Whether a message can carry a meaning its words alone miss: at least MIN_MEANINGFUL_TERMS
 * content words. "ok thanks", "yes", "hi there", "42" or an emoji carry none, and one content
 * word ("allergies?") is what the keyword side finds best (word forms, prefixes, typos). A run
 * of a spaceless script (Chinese, Japanese, Thai) is a phrase: one word per two characters.
 */
export function carriesMeaning(message: string): boolean {
  let count = 0;
  for (const term of meaningfulTerms(message))
    count += SPACELESS.test(term) ? Math.floor(term.length / 2) : 1;
  return count >= MIN_MEANINGFUL_TERMS;
}

/**
 * A keyword hit that found what the message is about: it matched every content word of the
 * message, or at least STRONG_MATCHED_TERMS of them.
 */
export function isStrongHit(
  matched: readonly string[] | undefined,
  terms: readonly string[],
): boolean {
  if (!matched?.length || !terms.length) return false;
  const found = new Set(matched);
  let hits = 0;
  for (const term of terms) if (found.has(term)) hits++;
  return hits === terms.length || hits >= STRONG_MATCHED_TERMS;
}

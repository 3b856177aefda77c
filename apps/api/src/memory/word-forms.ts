/**
 * A small English stemmer for memory search: enough that "allergy", "allergies" and
 * "allergic" meet, "moved" finds "move", "working" finds "work". It strips one suffix,
 * the longest that leaves a stem of at least three letters; index and query share it,
 * so a wrong stem is wrong the same way on both sides.
 */
const SUFFIXES = [
  'ically',
  'ations',
  'ation',
  'ingly',
  'ments',
  'ment',
  'ness',
  'ings',
  'ies',
  'ied',
  'ing',
  'ers',
  'ic',
  'ed',
  'es',
  'er',
  'ly',
  'y',
  's',
  'e',
];

const MIN_STEM = 3;

const ASCII_WORD = /^[a-z0-9'’]+$/;

export function wordForm(word: string): string {
  const lower = word.toLowerCase();
  // NFKC only where it can change something: the index runs this on every word at start.
  let term = ASCII_WORD.test(lower) ? lower : lower.normalize('NFKC');
  if (term.endsWith("'s") || term.endsWith('’s')) term = term.slice(0, -2);
  // Numbers, codes and non-Latin words are kept whole.
  if (!/^[a-z]+$/.test(term)) return term;
  for (const suffix of SUFFIXES)
    if (term.endsWith(suffix) && term.length - suffix.length >= MIN_STEM)
      return term.slice(0, -suffix.length);
  return term;
}

/** Words of a text as the index sees them: letters and digits, apostrophes kept inside a word. */
export function words(text: string): string[] {
  return text.match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? [];
}

/** Very common words: no meaning for ranking, and they make the index larger. */
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by did do does for from had has have he her his i if in is it its ' +
    'me my of on or our she so that the their them they this to was we were what when where ' +
    'which who why will with you your about did tell told'
  ).split(' '),
);

/** The index's term pipeline: lower case, no stop words, one word form. */
export function indexTerm(term: string): string | null {
  const lower = term.toLowerCase();
  if (STOP_WORDS.has(lower)) return null;
  return wordForm(lower);
}

import { indexTerm, wordForm, words } from './word-forms';

describe('wordForm', () => {
  it.each([
    ['allergy', 'allergic'],
    ['allergies', 'allergic'],
    ['moved', 'move'],
    ['moving', 'moves'],
    ['working', 'works'],
    ['houses', 'house'],
    ["Anna's", 'Anna'],
  ])('%s and %s meet', (a, b) => {
    expect(wordForm(a)).toBe(wordForm(b));
  });

  it.each([
    ['cat', 'cats'],
    ['job', 'jobs'],
  ])('keeps short stems whole: %s', (a, b) => {
    expect(wordForm(a)).toBe(wordForm(b));
    expect(wordForm(a).length).toBeGreaterThanOrEqual(3);
  });

  it('does not merge unrelated words', () => {
    expect(wordForm('berlin')).not.toBe(wordForm('lisbon'));
    expect(wordForm('dentist')).not.toBe(wordForm('doctor'));
  });

  it('leaves numbers and non-Latin words alone', () => {
    expect(wordForm('2026')).toBe('2026');
    expect(wordForm('Москва')).toBe('москва');
  });
});

describe('words and indexTerm', () => {
  it('splits on punctuation and drops stop words', () => {
    expect(
      words("What did I tell you about Anna's allergy?").map(indexTerm),
    ).toEqual([null, null, null, null, null, null, 'anna', 'allerg']);
  });
});

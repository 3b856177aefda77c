import { carriesMeaning, isStrongHit, meaningfulTerms } from './recall-query';

describe('recall-query: when a message is worth an embedding', () => {
  it('finds no meaning in small talk, numbers, emoji or a single content word', () => {
    for (const message of [
      'ok',
      'ok thanks!',
      'Yes please',
      'hi there',
      'Thank you, great',
      '42',
      '2026-03-01',
      '👍🎉',
      '?!',
      'allergies?',
      'Go ahead and continue',
    ])
      expect(carriesMeaning(message)).toBe(false);
  });

  it('finds it in a question or statement with two content words or more, in any language', () => {
    for (const message of [
      'When is the instrument class?',
      "What did I tell you about Anna's allergy?",
      'Wo wohnt meine Schwester jetzt?',
      '我的妹妹住在哪里',
      'où habite ma sœur',
    ])
      expect(carriesMeaning(message)).toBe(true);
  });

  it("gives the message's content words as the index sees them (word forms, once each)", () => {
    expect(
      meaningfulTerms('When are the cello lessons? Cello lesson!'),
    ).toEqual(['cello', 'lesson']);
  });

  it('calls a hit strong when it matched every content word, or three of them', () => {
    const terms = ['cello', 'lesson', 'schedul', 'autumn'];
    expect(isStrongHit(['cello', 'lesson', 'schedul', 'autumn'], terms)).toBe(
      true,
    );
    expect(isStrongHit(['cello', 'lesson', 'schedul'], terms)).toBe(true);
    expect(isStrongHit(['cello', 'lesson'], terms)).toBe(false);
    expect(isStrongHit(['cello', 'lesson'], ['cello', 'lesson'])).toBe(true);
    expect(isStrongHit(undefined, terms)).toBe(false);
    expect(isStrongHit(['cello'], [])).toBe(false);
  });
});

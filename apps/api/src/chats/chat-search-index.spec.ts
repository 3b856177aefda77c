import {
  appended,
  fromFirstHolding,
  holds,
  indexed,
  trigramBits,
} from './chat-search-index';
import { searchSnippet } from './chats.service';

/** The trigram filter may only spare a chat that does not hold the text: never one that does. */
describe('chat search trigram filter', () => {
  const alphabet = ['a', 'b', 'c', 'É', 'é', 'ß', 'İ', '😀', ' ', '\n', 'Σ'];
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const word = (length: number) =>
    Array.from({ length }, () => alphabet[random(alphabet.length)]).join('');

  it("a finished turn appended to a chat's entry equals the entry made from all its messages", () => {
    for (let round = 0; round < 200; round++) {
      const messages = Array.from({ length: 1 + random(5) }, () =>
        word(random(30)),
      );
      const ids = messages.map((_, i) => String(i).padStart(4, '0'));
      const turn = Array.from({ length: 1 + random(2) }, () =>
        word(random(30)),
      );
      const all = [...messages, ...turn];
      const allIds = all.map((_, i) => String(i).padStart(4, '0'));
      const grown = appended(indexed(messages, ids), allIds, all);
      const whole = indexed(all, allIds);
      expect(grown.text).toBe(whole.text);
      expect([...grown.starts]).toEqual([...whole.starts]);
      expect([...grown.trigrams]).toEqual([...whole.trigrams]);
      expect(grown.messages).toEqual(all);
      expect(grown.ids).toEqual(allIds);
    }
  });

  it('finds exactly what a plain scan of the lower-cased messages finds', () => {
    let found = 0;
    for (let round = 0; round < 300; round++) {
      const messages = Array.from({ length: 1 + random(6) }, () =>
        word(random(40)),
      );
      const chat = indexed(messages);
      const plain = messages.map((m) => m.toLocaleLowerCase()).join('\n');
      for (let probe = 0; probe < 20; probe++) {
        // Half taken from the text itself (so they match), half made up.
        const from = random(Math.max(1, plain.length));
        const lower =
          probe % 2
            ? plain.slice(from, from + 1 + random(6))
            : word(1 + random(5)).toLocaleLowerCase();
        const expected = plain.includes(lower);
        if (expected) found++;
        expect(holds(chat, lower, trigramBits(lower))).toBe(expected);
      }
    }
    expect(found).toBeGreaterThan(2000);
  });

  it('spares a chat without the trigrams without scanning it', () => {
    const chat = indexed(['plan week trip budget', 'garden meeting invoice']);
    const lower = 'zanzibar';
    const wanted = trigramBits(lower);
    // Not one of the words' trigrams sets all of them (the filter's whole point).
    expect(
      [...wanted].every((bit) => chat.trigrams[bit >>> 5] & (1 << (bit & 31))),
    ).toBe(false);
    expect(holds(chat, 'garden meeting', trigramBits('garden meeting'))).toBe(
      true,
    );
    expect(holds(chat, 'budget\ngarden', trigramBits('budget\ngarden'))).toBe(
      true,
    );
  });

  it('starts the snippet search at the message a message-by-message search would', () => {
    let cut = 0;
    for (let round = 0; round < 300; round++) {
      const messages = Array.from({ length: 1 + random(6) }, () =>
        word(random(30)),
      );
      const chat = indexed(messages);
      for (let probe = 0; probe < 10; probe++) {
        const source = messages[random(messages.length)];
        const from = random(Math.max(1, source.length));
        // Words of a message (other spacing and case too), or made up; trimmed as the list trims the search.
        const taken = source.slice(from, from + 1 + random(8));
        const needle = (
          probe % 3 === 0
            ? word(1 + random(4))
            : probe % 3 === 1
              ? taken.toUpperCase().replace(/ /g, ' \n ')
              : taken
        ).trim();
        if (!needle) continue;
        const first = messages.findIndex(
          (m) => searchSnippet(m, needle) !== null,
        );
        const expected = first < 0 ? [] : messages.slice(first);
        if (first >= 0) cut++;
        expect(fromFirstHolding(chat, needle)).toEqual(expected);
      }
    }
    expect(cut).toBeGreaterThan(500);
    // Words split over two messages (the new line joining them) are not a match.
    const split = indexed(['plan a', 'b plan', 'then A\t B']);
    expect(fromFirstHolding(split, 'a b')).toEqual(['then A\t B']);
    expect(fromFirstHolding(indexed(['plan a', 'b plan']), 'a b')).toEqual([]);
  });
});

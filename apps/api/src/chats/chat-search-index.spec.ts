import {
  appended,
  firstHolding,
  holds,
  indexed,
  trigramBits,
  writtenMessage,
  type IndexedChat,
} from './chat-search-index';
import { searchSnippet } from './chats.service';

/** The trigram filter may only spare a chat that does not hold the text: never one that does. */
describe('chat search trigram filter', () => {
  const alphabet = ['a', 'b', 'c', 'É', 'é', 'ß', 'İ', '😀', ' ', '\n', 'Σ'];
  /** The chat's messages as written, as the index gives them back. */
  const writtenOf = (chat: IndexedChat) =>
    chat.ids.map((_, i) => writtenMessage(chat, i));
  /** The chat's messages from the first one holding `needle`, as the snippet search looks through them. */
  const fromFirstHolding = (chat: IndexedChat, needle: string) => {
    const first = firstHolding(chat, needle);
    return first < 0 ? [] : writtenOf(chat).slice(first);
  };
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
      const grown = appended(indexed(messages, ids), allIds, turn);
      const whole = indexed(all, allIds);
      expect(grown.text).toBe(whole.text);
      expect([...grown.starts]).toEqual([...whole.starts]);
      expect([...grown.trigrams]).toEqual([...whole.trigrams]);
      expect([...grown.casedAt]).toEqual([...whole.casedAt]);
      expect([...grown.casedUnits]).toEqual([...whole.casedUnits]);
      expect(writtenOf(grown)).toEqual(all);
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

  it('gives every message back as written from the lower-cased text and its case marks', () => {
    // Letters whose lower case is longer ('İ'), depends on what follows ('Σ'), is another length in UTF-16
    // or is a title case ('ǅ'), emoji, accents, and whole messages in capitals (kept whole).
    const letters = [
      ...alphabet.filter((letter) => letter !== 'İ'),
      ...['A', 'B', 'Ǆ', 'ǅ', 'ẞ', 'K', 'Å', 'Ω', '𐐀', 'Ü', '.'],
    ];
    const any = (length: number) =>
      Array.from({ length }, () => letters[random(letters.length)]).join('');
    const message = () => {
      const text = any(random(80));
      const at = random(text.length + 1);
      switch (random(8)) {
        case 0:
          return text.toUpperCase();
        case 1:
          return `${text.slice(0, at)}İ${text.slice(at)}`;
        case 2:
          // Lower-cased, the text after it moves by one unit: nothing past it may be marked.
          return `${text}İ`;
        default:
          return text;
      }
    };
    // Its own sequence, whichever tests ran before.
    seed = 11;
    let marked = 0;
    let whole = 0;
    for (let round = 0; round < 300; round++) {
      const messages = Array.from({ length: 1 + random(6) }, message);
      const chat = indexed(messages);
      expect(chat.text).toBe(
        messages.map((m) => m.toLocaleLowerCase()).join('\n'),
      );
      expect(writtenOf(chat)).toEqual(messages);
      marked += chat.casedAt.length;
      whole += chat.written?.size ?? 0;
    }
    // Both ways of keeping the case were taken.
    expect(marked).toBeGreaterThan(200);
    expect(whole).toBeGreaterThan(300);
  });

  it('cuts the snippet from the message as written, past messages that lower-casing lengthened', () => {
    const messages = [
      'İİİ İSTANBUL, İzmir',
      'Meet Ånna at the CAFÉ Ünter 😀 at NOON',
      'THE WHOLE MESSAGE IN CAPITALS ABOUT A QUOKKA',
      'ΣΟΦΙΑ ΚΑΙ ΟΔΥΣΣΕΑΣ 𐐀𐐁 Hello',
      'then we take the night ferry over the sea to İzmir',
    ];
    let chat = indexed(messages.slice(0, 1), ['01']);
    for (let i = 1; i < messages.length; i++)
      chat = appended(
        chat,
        messages.slice(0, i + 1).map((_, k) => String(k + 1).padStart(2, '0')),
        [messages[i]],
      );
    const snippet = (needle: string) => {
      const first = firstHolding(chat, needle);
      return first < 0
        ? null
        : searchSnippet(writtenMessage(chat, first), needle);
    };
    expect(snippet('ånna at the café')).toBe(messages[1]);
    expect(snippet('quokka')).toBe(messages[2]);
    expect(snippet('οδυσσεας')).toBe(messages[3]);
    expect(snippet('i̇zmir')).toBe(messages[0]);
    expect(snippet('ferry')).toBe(messages[4]);
    expect(snippet('zanzibar')).toBeNull();
    expect(chat.written?.has(0)).toBe(true);
    expect(chat.written?.has(2)).toBe(true);
    // The second is kept as marks, not whole: its case comes back from them.
    expect(chat.written?.has(1)).toBe(false);
  });
});

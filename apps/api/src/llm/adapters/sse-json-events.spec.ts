import { APIError } from 'openai';
import { Stream } from 'openai/streaming';
import { sseJsonEvents } from './sse-json-events';
import { body, everyByte, splitsOf } from '../../../test/support/stream-bodies';

const encoder = new TextEncoder();

type Outcome = { events: unknown[]; error?: string };

async function read(iterable: AsyncIterable<unknown>): Promise<Outcome> {
  const events: unknown[] = [];
  try {
    for await (const event of iterable) events.push(event);
  } catch (error) {
    const e = error as Error;
    return {
      events,
      error: `${e instanceof APIError ? 'APIError' : e.name}: ${e.message}`,
    };
  }
  return { events };
}

/** What the SDK's own `Stream` yields for the same body, and ours. */
async function both(
  text: string,
  cuts: number[],
): Promise<[sdk: Outcome, ours: Outcome]> {
  const bytes = encoder.encode(text);
  const sdk = Stream.fromSSEResponse(
    new Response(body(bytes, cuts).stream),
    new AbortController(),
    // A logger that says nothing (the SDK logs a chunk that is not JSON before it throws).
    { logger: { error: () => undefined } } as never,
  );
  const ours = sseJsonEvents(new Response(body(bytes, cuts).stream));
  return [await read(sdk), await read(ours)];
}

const chunk = (content: string) =>
  JSON.stringify({
    id: 'c1',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta: { content } }],
  });

const CASES: Array<[name: string, text: string]> = [
  [
    'events, then [DONE]',
    `data: ${chunk('Hel')}\n\ndata: ${chunk('lo')}\n\ndata: [DONE]\n\n`,
  ],
  [
    'CRLF line ends',
    `data: ${chunk('a')}\r\n\r\ndata: ${chunk('b')}\r\n\r\ndata: [DONE]\r\n\r\n`,
  ],
  [
    'comments, an event name and fields it does not know',
    `: keep-alive\n\nevent: message\nid: 7\nretry: 10\ndata: ${chunk('x')}\n\n: more\n\n`,
  ],
  ['data on several lines', 'data: {"a":\ndata: [1,\ndata: 2]}\n\n'],
  [
    'no space after the colon, two spaces',
    'data:{"a":1}\n\ndata:  {"b":2}\n\n',
  ],
  [
    'UTF-8 of every width',
    `data: ${chunk('Grüße 👋🏽 — 日本語')}\n\ndata: ${chunk('€')}\n\n`,
  ],
  [
    'events after [DONE] are ignored',
    `data: [DONE]\n\ndata: ${chunk('late')}\n\n`,
  ],
  [
    'an unfinished last event is dropped',
    `data: ${chunk('a')}\n\ndata: {"b":1}\n`,
  ],
  [
    'an error event',
    `data: ${chunk('a')}\n\ndata: {"error":{"message":"Rate limit reached","type":"requests"}}\n\n`,
  ],
  ['data that is not JSON', `data: ${chunk('a')}\n\ndata: not json\n\n`],
  ['an event with a name and no data', 'event: ping\n\n'],
  ['a data line without a colon', 'data\n\n'],
  ['nothing', ''],
];

describe('sseJsonEvents: the events the SDK reads, read straight from the body', () => {
  it.each(CASES)(
    '%s: the same events and error as the SDK',
    async (_name, text) => {
      for (const cuts of splitsOf(encoder.encode(text).length)) {
        const [sdk, ours] = await both(text, cuts);
        expect({ cuts, ...ours }).toEqual({ cuts, ...sdk });
      }
    },
  );

  it('throws the SDK’s APIError for an error event, with its message', async () => {
    const [, ours] = await both(
      'data: {"error":{"message":"Rate limit reached"}}\n\n',
      [],
    );
    expect(ours.error).toMatch(/^APIError: .*Rate limit reached/);
  });

  it('a lone CR also ends a line', async () => {
    const events = await read(
      sseJsonEvents(
        new Response(
          body(encoder.encode('data: {"a":1}\r\rdata: {"b":2}\r\r'), [
            14,
          ]).stream,
        ),
      ),
    );
    expect(events).toEqual({ events: [{ a: 1 }, { b: 2 }] });
  });

  it('an abort of the request ends the events quietly, as the SDK does', async () => {
    const abort = new DOMException('This operation was aborted', 'AbortError');
    const bytes = encoder.encode(`data: ${chunk('a')}\n\n`);
    const ours = await read(
      sseJsonEvents(new Response(body(bytes, [], abort).stream)),
    );
    const sdk = await read(
      Stream.fromSSEResponse(
        new Response(body(bytes, [], abort).stream),
        new AbortController(),
      ),
    );
    expect(ours).toEqual(sdk);
    expect(ours.events).toHaveLength(1);
    const failure = new TypeError('terminated');
    expect(
      await read(sseJsonEvents(new Response(body(bytes, [], failure).stream))),
    ).toEqual({
      events: [JSON.parse(chunk('a'))],
      error: 'TypeError: terminated',
    });
  });

  it('a reader that stops early cancels the body (the connection closes); one read to the end does not', async () => {
    const bytes = encoder.encode(
      `data: ${chunk('a')}\n\ndata: ${chunk('b')}\n\n`,
    );
    // In small pieces, so the body has not ended when the reader stops.
    const early = body(bytes, everyByte(bytes));
    for await (const event of sseJsonEvents(new Response(early.stream))) {
      expect(event).toEqual(JSON.parse(chunk('a')));
      break;
    }
    expect(early.cancelled()).toBe(true);
    const full = body(bytes, [10]);
    expect(
      (await read(sseJsonEvents(new Response(full.stream)))).events,
    ).toHaveLength(2);
    expect(full.cancelled()).toBe(false);
  });

  it('a response without a body is an error', async () => {
    await expect(read(sseJsonEvents(new Response(null)))).resolves.toEqual({
      events: [],
      error: 'Error: The streamed reply has no body.',
    });
  });
});

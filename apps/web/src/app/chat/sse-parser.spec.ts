import { ReadableStream } from 'node:stream/web';
import { TextDecoder as NodeTextDecoder, TextEncoder } from 'node:util';
import { SseParser, type SseMessage, readSseStream } from './sse-parser';

/** Feeds `text` to a fresh parser in pieces cut at `cuts`, collecting every event. */
function parseInPieces(text: string, cuts: number[]): SseMessage[] {
  const parser = new SseParser();
  const events: SseMessage[] = [];
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    events.push(...parser.push(text.slice(from, cut)));
    from = cut;
  }
  return events;
}

const STREAM =
  ': connected\n\n' +
  'event: message\ndata: {"id":"m1","role":"user"}\n\n' +
  'event: delta\ndata: {"text":"Hel"}\n\n' +
  'event: delta\r\ndata: {"text":"lo"}\r\n\r\n' +
  'event: tool_call\rdata: {"id":"t1"}\r\r' +
  'event: done\ndata: {"messageId":"m2"}\n\n';

const EXPECTED: SseMessage[] = [
  { event: 'message', data: '{"id":"m1","role":"user"}' },
  { event: 'delta', data: '{"text":"Hel"}' },
  { event: 'delta', data: '{"text":"lo"}' },
  { event: 'tool_call', data: '{"id":"t1"}' },
  { event: 'done', data: '{"messageId":"m2"}' },
];

describe('SseParser', () => {
  it('reads named events with LF, CRLF and CR line ends and skips comments', () => {
    expect(new SseParser().push(STREAM)).toEqual(EXPECTED);
  });

  it('gives the same events however the text is split into chunks, even inside a CRLF', () => {
    // Every single cut position, then every pair of them.
    for (let cut = 0; cut <= STREAM.length; cut++) {
      expect(parseInPieces(STREAM, [cut])).toEqual(EXPECTED);
    }
    for (let a = 0; a <= STREAM.length; a += 3) {
      for (let b = a; b <= STREAM.length; b += 5)
        expect(parseInPieces(STREAM, [a, b])).toEqual(EXPECTED);
    }
    // One character at a time.
    expect(
      parseInPieces(
        STREAM,
        Array.from(STREAM, (_, i) => i),
      ),
    ).toEqual(EXPECTED);
  });

  it('joins several data lines with newlines and strips exactly one space after the colon', () => {
    const events = new SseParser().push(
      'data: line one\ndata:line two\ndata:   indented\ndata\n\n',
    );
    expect(events).toEqual([
      { event: 'message', data: 'line one\nline two\n  indented\n' },
    ]);
  });

  it('defaults the event name to "message" and keeps the id', () => {
    expect(new SseParser().push('id: 7\ndata: x\n\n')).toEqual([
      { event: 'message', data: 'x', id: '7' },
    ]);
  });

  it('dispatches nothing for an event without data, and ignores retry and unknown fields', () => {
    expect(
      new SseParser().push(
        'event: ping\n\nretry: 1000\nfoo: bar\n: just a comment\n\n',
      ),
    ).toEqual([]);
  });

  it('does not let the name of one event leak into the next', () => {
    expect(
      new SseParser().push('event: delta\ndata: a\n\ndata: b\n\n'),
    ).toEqual([
      { event: 'delta', data: 'a' },
      { event: 'message', data: 'b' },
    ]);
  });

  it('waits for the empty line before dispatching, and discards an unterminated event at the end', () => {
    const parser = new SseParser();
    expect(parser.push('event: done\ndata: {"messageId":"m"}\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([
      { event: 'done', data: '{"messageId":"m"}' },
    ]);
    expect(parser.push('event: delta\ndata: half')).toEqual([]);
    expect(parser.end()).toEqual([]);
    expect(parser.push('data: fresh\n\n')).toEqual([
      { event: 'message', data: 'fresh' },
    ]);
  });

  it('ignores a byte order mark at the start of the stream', () => {
    expect(new SseParser().push('\uFEFFevent: delta\ndata: x\n\n')).toEqual([
      { event: 'delta', data: 'x' },
    ]);
  });
});

describe('readSseStream', () => {
  const hadDecoder = 'TextDecoder' in globalThis;
  beforeAll(() => {
    // jsdom has no TextDecoder; browsers do.
    if (!hadDecoder)
      Object.assign(globalThis, { TextDecoder: NodeTextDecoder });
  });
  afterAll(() => {
    if (!hadDecoder)
      delete (globalThis as { TextDecoder?: unknown }).TextDecoder;
  });

  function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
  }

  async function collect(
    body: ReadableStream<Uint8Array>,
  ): Promise<SseMessage[]> {
    const events: SseMessage[] = [];
    for await (const event of readSseStream(
      body as unknown as globalThis.ReadableStream<Uint8Array>,
    ))
      events.push(event);
    return events;
  }

  it('decodes UTF-8 split in the middle of a character', async () => {
    const bytes = new TextEncoder().encode(
      'event: delta\ndata: {"text":"héllo 👋"}\n\n',
    );
    const emoji = bytes.indexOf(0xf0);
    const chunks = [
      bytes.slice(0, 25),
      bytes.slice(25, emoji + 2),
      bytes.slice(emoji + 2),
    ];
    expect(await collect(streamOf(chunks))).toEqual([
      { event: 'delta', data: '{"text":"héllo 👋"}' },
    ]);
  });

  it('cancels the body when the reader stops early', async () => {
    const cancel = jest.fn();
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(encoder.encode('data: tick\n\n'));
      },
      cancel,
    });
    for await (const event of readSseStream(
      body as unknown as globalThis.ReadableStream<Uint8Array>,
    )) {
      expect(event.data).toBe('tick');
      break;
    }
    expect(cancel).toHaveBeenCalled();
  });
});

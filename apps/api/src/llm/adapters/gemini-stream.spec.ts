import { ApiError, GoogleGenAI, type HttpResponse } from '@google/genai';
import { GeminiClient, geminiStreamPieces } from './gemini-stream';
import { body, everyByte, splitsOf } from '../../../test/support/stream-bodies';

const encoder = new TextEncoder();
const HEADERS = { 'content-type': 'text/event-stream', 'x-request': 'r1' };

type Piece = { json?: unknown; jsonError?: string; headers: unknown };
type Outcome = { pieces: Piece[]; error?: string };

const describeError = (error: unknown) => {
  const e = error as Error;
  return `${e instanceof ApiError ? `ApiError ${e.status}` : e.name}: ${e.message}`;
};

/** Reads every piece as the models module does: its `json()` and its headers. */
async function read(pieces: AsyncIterable<HttpResponse>): Promise<Outcome> {
  const out: Piece[] = [];
  try {
    for await (const piece of pieces) {
      try {
        out.push({ json: await piece.json(), headers: piece.headers });
      } catch (error) {
        out.push({ jsonError: describeError(error), headers: piece.headers });
      }
    }
  } catch (error) {
    return { pieces: out, error: describeError(error) };
  }
  return { pieces: out };
}

/** The SDK's own reader (`ApiClient.processStreamResponse`), as a plain client has it. */
const sdkClient = (
  new GoogleGenAI({ apiKey: 'k', vertexai: false }) as unknown as {
    apiClient: {
      processStreamResponse(response: Response): AsyncGenerator<HttpResponse>;
    };
  }
).apiClient;

const response = (stream: ReadableStream<Uint8Array>) =>
  new Response(stream, { headers: HEADERS });

async function both(
  text: string,
  cuts: number[],
): Promise<[sdk: Outcome, ours: Outcome]> {
  const bytes = encoder.encode(text);
  const sdk = sdkClient.processStreamResponse(
    response(body(bytes, cuts).stream),
  );
  const ours = geminiStreamPieces(response(body(bytes, cuts).stream));
  return [await read(sdk), await read(ours)];
}

const chunk = (text: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }],
    modelVersion: 'gemini-2.5-flash',
    ...extra,
  });

const CASES: Array<[name: string, text: string]> = [
  [
    'pieces as Google sends them (CRLF CRLF)',
    `data: ${chunk('Hel')}\r\n\r\ndata: ${chunk('lo', { usageMetadata: { promptTokenCount: 3 } })}\r\n\r\n`,
  ],
  ['LF LF', `data: ${chunk('a')}\n\ndata: ${chunk('b')}\n\n`],
  ['CR CR', `data: ${chunk('a')}\r\rdata: ${chunk('b')}\r\r`],
  [
    'delimiters mixed, the first one wins',
    `data: ${chunk('a')}\n\ndata: ${chunk('b')}\r\n\r\ndata: ${chunk('c')}\r\r`,
  ],
  [
    'no space after the colon, spaces around the event',
    `  data:${chunk('a')}  \n\n\tdata:   ${chunk('b')}\n\n`,
  ],
  [
    'events that are not data, and comments',
    `: keep-alive\n\nevent: ping\n\nid: 3\n\ndata: ${chunk('x')}\n\n`,
  ],
  [
    'UTF-8 of every width',
    `data: ${chunk('Grüße 👋🏽 — 日本語')}\r\n\r\ndata: ${chunk('€')}\r\n\r\n`,
  ],
  ['a piece that is not JSON', `data: ${chunk('a')}\n\ndata: not json\n\n`],
  ['data on several lines', 'data: {"a":\ndata: 1}\n\n'],
  [
    'an error piece with an HTTP code',
    `data: ${chunk('a')}\r\n\r\ndata: {"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}\r\n\r\n`,
  ],
  [
    'an error piece with a code that is not an HTTP error',
    `data: {"error":{"code":200,"message":"odd"}}\n\ndata: {"error":{"code":"500"}}\n\ndata: {"error":null}\n\n`,
  ],
  [
    'a body that is a JSON error, not an event',
    '{"error":{"code":500,"message":"Internal error","status":"INTERNAL"}}',
  ],
  ['a body that is other JSON', '{"candidates":[]}'],
  ['text left after the last event', `data: ${chunk('a')}\n\ndata: {"b"`],
  ['only whitespace after the last event', `data: ${chunk('a')}\n\n \r\n`],
  ['nothing', ''],
];

describe('geminiStreamPieces: the pieces the SDK reads, without a Response each', () => {
  it.each(CASES)(
    '%s: the same pieces, JSON, headers and errors as the SDK',
    async (_name, text) => {
      for (const cuts of splitsOf(encoder.encode(text).length)) {
        const [sdk, ours] = await both(text, cuts);
        expect({ cuts, ...ours }).toEqual({ cuts, ...sdk });
      }
    },
  );

  it('throws the SDK’s ApiError for an error piece, with its status and message', async () => {
    const [, ours] = await both(
      'data: {"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}\n\n',
      [],
    );
    expect(ours.error).toMatch(
      /^ApiError 429: got status: RESOURCE_EXHAUSTED\. .*Resource exhausted/,
    );
  });

  it('a failing read (an abort, a cut connection) is thrown as it is, after the pieces before it', async () => {
    const bytes = encoder.encode(`data: ${chunk('a')}\n\n`);
    for (const failure of [
      new DOMException('This operation was aborted', 'AbortError'),
      new TypeError('terminated'),
    ]) {
      const ours = await read(
        geminiStreamPieces(response(body(bytes, [], failure).stream)),
      );
      const sdk = await read(
        sdkClient.processStreamResponse(
          response(body(bytes, [], failure).stream),
        ),
      );
      expect(ours).toEqual(sdk);
      expect(ours.pieces).toHaveLength(1);
      expect(ours.error).toBe(describeError(failure));
    }
  });

  it('a reader that stops early cancels the body (the connection closes); one read to the end does not', async () => {
    const bytes = encoder.encode(
      `data: ${chunk('a')}\n\ndata: ${chunk('b')}\n\n`,
    );
    const early = body(bytes, everyByte(bytes));
    for await (const piece of geminiStreamPieces(response(early.stream))) {
      expect(await piece.json()).toEqual(JSON.parse(chunk('a')));
      break;
    }
    expect(early.cancelled()).toBe(true);
    const full = body(bytes, [10]);
    expect(
      (await read(geminiStreamPieces(response(full.stream)))).pieces,
    ).toHaveLength(2);
    expect(full.cancelled()).toBe(false);
  });

  it('a response without a body is the SDK’s error', async () => {
    const expected = {
      pieces: [],
      error: 'Error: Response body is empty',
    };
    await expect(read(geminiStreamPieces(new Response(null)))).resolves.toEqual(
      expected,
    );
    await expect(
      read(sdkClient.processStreamResponse(new Response(null))),
    ).resolves.toEqual(expected);
  });

  it('GeminiClient reads its streamed replies with it', () => {
    const client = new GeminiClient({ apiKey: 'k', vertexai: false });
    const { apiClient } = client as unknown as {
      apiClient: typeof sdkClient;
    };
    expect(apiClient.processStreamResponse).not.toBe(
      sdkClient.processStreamResponse,
    );
    const pieces = apiClient.processStreamResponse(
      response(body(encoder.encode(`data: ${chunk('a')}\n\n`), []).stream),
    );
    return expect(read(pieces)).resolves.toEqual({
      pieces: [{ json: JSON.parse(chunk('a')), headers: HEADERS }],
    });
  });
});

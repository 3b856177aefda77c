import {
  ApiError,
  GoogleGenAI,
  type GoogleGenAIOptions,
  type HttpResponse,
} from '@google/genai';
import { geminiModelPath } from './gemini-request';

/**
 * `GoogleGenAI` whose streamed replies are read by `geminiStreamPieces`: the SDK's own reader
 * builds a fetch `Response` for every piece of a reply, copies the response's headers into it and
 * parses the piece's JSON twice (once to look for an error, once through `Response.json()`), which
 * cost a streamed call about as much CPU as the rest of the turn's model path. Requests, errors and
 * everything else stay the SDK's.
 */
export class GeminiClient extends GoogleGenAI {
  constructor(options: GoogleGenAIOptions) {
    super(options);
    // `processStreamResponse` is the ApiClient's public seam between a streamed response and the
    // models module, which reads only each piece's `json()` and `headers`.
    this.apiClient.processStreamResponse = (response: Response) =>
      geminiStreamPieces(response);
  }

  /**
   * Sends one `streamGenerateContent` request whose body is built (`geminiRequestBody`) and returns
   * its pieces: the URL, the headers, the fetch, the timeout and a failed status's `ApiError` are
   * the SDK's, as `models.generateContentStream` makes them.
   */
  streamGenerateContent(
    model: string,
    body: string,
    signal: AbortSignal,
  ): Promise<AsyncGenerator<HttpResponse>> {
    return this.apiClient.requestStream({
      path: `${geminiModelPath(model)}:streamGenerateContent?alt=sse`,
      body,
      httpMethod: 'POST',
      abortSignal: signal,
    });
  }
}

const DATA_PREFIX = 'data:';
const DELIMITERS = ['\n\n', '\r\r', '\r\n\r\n'] as const;

/**
 * The pieces of a streamed Gemini reply (`?alt=sse`), as the SDK's `ApiClient.processStreamResponse`
 * yields them, with the same meaning:
 * - events end at the first of `\n\n`, `\r\r` or `\r\n\r\n`; an event is trimmed and only a `data:`
 *   one is a piece (its value trimmed); bytes are UTF-8, split anywhere;
 * - a network read that is, whole, a JSON error object with a `code` of 400–599 throws the SDK's
 *   `ApiError` (`got status: …`), and so does a piece that is one;
 * - a piece that is not JSON rejects its `json()` with `JSON.parse`'s error;
 * - text left after the last event throws `Incomplete JSON segment at the end`;
 * - a body-less response throws `Response body is empty`; a read's failure (an abort) is thrown as is.
 * Each piece's JSON is parsed once. A caller that stops early cancels the body (the SDK only releases
 * it, leaving the connection to the end of the reply).
 */
export async function* geminiStreamPieces(
  response: Response,
): AsyncGenerator<HttpResponse> {
  const reader = response?.body?.getReader();
  if (!reader) throw new Error('Response body is empty');
  const decoder = new TextDecoder('utf-8');
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  let finished = false;
  try {
    let buffer = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        if (buffer.trim().length > 0)
          throw new Error('Incomplete JSON segment at the end');
        break;
      }
      const text = decoder.decode(value, { stream: true });
      throwIfErrorJson(text);
      buffer += text;
      for (;;) {
        let at = -1;
        let length = 0;
        for (const delimiter of DELIMITERS) {
          const index = buffer.indexOf(delimiter);
          if (index !== -1 && (at === -1 || index < at)) {
            at = index;
            length = delimiter.length;
          }
        }
        if (at === -1) break;
        const event = buffer.substring(0, at).trim();
        buffer = buffer.substring(at + length);
        if (!event.startsWith(DATA_PREFIX)) continue;
        yield piece(headers, event.substring(DATA_PREFIX.length).trim());
      }
    }
    finished = true;
  } finally {
    if (finished) reader.releaseLock();
    else await reader.cancel().catch(() => undefined);
  }
}

/** One piece: its JSON parsed here, once; the error thrown for an error object, as the SDK does. */
function piece(headers: Record<string, string>, data: string): HttpResponse {
  let parsed: unknown;
  let failure: unknown = null;
  try {
    parsed = JSON.parse(data);
  } catch (error) {
    failure = error;
  }
  if (failure === null) throwIfApiError(parsed);
  const json =
    failure === null
      ? () => Promise.resolve(parsed)
      : () => Promise.reject(failure);
  // What the models module reads of the SDK's `HttpResponse`: a copy of the headers and `json()`.
  return { headers: { ...headers }, json } as unknown as HttpResponse;
}

/** A network read that is, whole, an error object (only text starting with `{` can be one). */
function throwIfErrorJson(text: string): void {
  if (text.trimStart()[0] !== '{') return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return;
  }
  throwIfApiError(parsed);
}

/** The SDK's `throwIfStreamErrorChunk` for a parsed value. */
function throwIfApiError(parsed: unknown): void {
  if (parsed === null || typeof parsed !== 'object' || !('error' in parsed))
    return;
  const error = (parsed as { error: unknown }).error;
  if (error === null || typeof error !== 'object') return;
  const { status, code } = error as { status?: unknown; code?: unknown };
  if (typeof code === 'number' && code >= 400 && code < 600)
    throw new ApiError({
      message: `got status: ${status}. ${JSON.stringify(parsed)}`,
      status: code,
    });
}

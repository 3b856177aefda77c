import { APIError } from 'openai';

/**
 * The JSON events of a streamed OpenAI-style reply (`text/event-stream`), read straight from the
 * response's body: what the SDK's `Stream` yields for `/chat/completions`, without its four nested
 * async generators per event (bytes → double-newline pieces → lines → events → JSON), which cost a
 * plain turn ~0.4 ms of CPU. The same meaning as the SDK's reader:
 * - lines end with `\r\n`, `\n` or `\r` (also split across reads); bytes are UTF-8, split anywhere;
 * - `:` starts a comment; `field: value` drops one space after the colon; `data` lines join with `\n`;
 *   an empty line ends an event that has an `event` or a `data` line; an unfinished last event is dropped;
 * - `data: [DONE]` ends the events (the body is still read to its end, as the SDK does);
 * - each event's data is JSON (`JSON.parse`'s error when it is not); one with an `error` member
 *   throws the SDK's `APIError` for it, with the response's headers;
 * - an abort of the request ends the events quietly (the caller checks its signal), and a caller that
 *   stops early cancels the body, which closes the connection.
 */
export async function* sseJsonEvents<T>(response: Response): AsyncGenerator<T> {
  if (!response.body) throw new Error('The streamed reply has no body.');
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseEventParser();
  let finished = false;
  let done = false;
  try {
    for (;;) {
      const read = await reader.read();
      const text = read.done
        ? decoder.decode()
        : decoder.decode(read.value, { stream: true });
      for (const data of parser.push(text, read.done)) {
        if (done) continue;
        if (data.startsWith('[DONE]')) {
          done = true;
          continue;
        }
        const event = JSON.parse(data) as { error?: unknown } | null;
        if (event?.error)
          throw new APIError(
            undefined,
            event.error as object,
            undefined,
            response.headers,
          );
        yield event as T;
      }
      if (read.done) break;
    }
    finished = true;
  } catch (error) {
    if (isAbortError(error)) {
      finished = true;
      return;
    }
    throw error;
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    else reader.releaseLock();
  }
}

/** The SDK's test for an aborted fetch (a spec-compliant fetch's `AbortError`). */
function isAbortError(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { name?: unknown }).name === 'AbortError'
  );
}

/** Server-sent events' lines, fed text as it arrives; yields each finished event's data. */
export class SseEventParser {
  private buffer = '';
  private hasEvent = false;
  private data: string[] = [];

  /** The data of every event the text finishes (`end`: no more text comes). */
  push(text: string, end = false): string[] {
    const events: string[] = [];
    let buffer = this.buffer + text;
    let start = 0;
    // The next `\n` and `\r` at or after `start`, each looked for again only once passed.
    let lf = -2;
    let cr = -2;
    for (;;) {
      if (lf !== -1 && lf < start) lf = buffer.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = buffer.indexOf('\r', start);
      let stop: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        // A `\r` last in the text may be the first half of `\r\n`: wait for more.
        if (cr === buffer.length - 1 && !end) break;
        stop = cr;
        next = buffer.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
      } else if (lf !== -1) {
        stop = lf;
        next = lf + 1;
      } else break;
      const data = this.line(buffer.slice(start, stop));
      if (data !== null) events.push(data);
      start = next;
    }
    buffer = buffer.slice(start);
    this.buffer = end ? '' : buffer;
    return events;
  }

  /** One line; the event's data when the line ends one. */
  private line(line: string): string | null {
    if (line === '') {
      if (!this.hasEvent && this.data.length === 0) return null;
      const data = this.data.join('\n');
      this.hasEvent = false;
      this.data = [];
      return data;
    }
    if (line.charCodeAt(0) === 58 /* : */) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* space */) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.hasEvent = true;
    return null;
  }
}

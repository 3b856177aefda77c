/** One dispatched Server-Sent Event. */
export interface SseMessage {
  /** The `event:` field, `message` when the event had none. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  /** The `id:` field, when the event had one. */
  id?: string;
}

/**
 * An incremental parser for the `text/event-stream` format (WHATWG HTML, "Server-sent events"): feed it text
 * in chunks split anywhere, get complete events back. Lines end with CRLF, LF or CR; `:` lines are comments;
 * several `data:` lines form one multi-line payload; an empty line dispatches the event.
 */
export class SseParser {
  private buffer = '';
  private dataLines: string[] = [];
  private eventName = '';
  private eventId: string | undefined;
  private hasData = false;
  /** The previous chunk ended with CR: a LF at the start of the next one belongs to the same line end. */
  private skipLeadingLf = false;
  private started = false;

  /** Adds text; returns the events completed by it, in order. */
  push(chunk: string): SseMessage[] {
    let text = chunk;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.skipLeadingLf && text.length > 0) {
      this.skipLeadingLf = false;
      if (text[0] === '\n') text = text.slice(1);
    }
    this.buffer += text;

    const events: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const char = this.buffer[i];
      if (char !== '\n' && char !== '\r') continue;
      const line = this.buffer.slice(start, i);
      if (char === '\r') {
        if (i + 1 < this.buffer.length) {
          if (this.buffer[i + 1] === '\n') i++;
        } else {
          this.skipLeadingLf = true;
        }
      }
      start = i + 1;
      const event = this.processLine(line);
      if (event) events.push(event);
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /**
   * The stream ended. Per the standard, an event not yet terminated by an empty line is discarded;
   * the parser is ready for a new stream afterwards.
   */
  end(): SseMessage[] {
    this.buffer = '';
    this.resetEvent();
    this.skipLeadingLf = false;
    this.started = false;
    return [];
  }

  private processLine(line: string): SseMessage | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventName = value;
        break;
      case 'data':
        this.dataLines.push(value);
        this.hasData = true;
        break;
      case 'id':
        if (!value.includes('\0')) this.eventId = value;
        break;
      default:
        // `retry` and unknown fields mean nothing to a one-shot fetch stream.
        break;
    }
    return null;
  }

  private dispatch(): SseMessage | null {
    const event: SseMessage | null = this.hasData
      ? {
          event: this.eventName || 'message',
          data: this.dataLines.join('\n'),
          ...(this.eventId !== undefined ? { id: this.eventId } : {}),
        }
      : null;
    this.resetEvent();
    return event;
  }

  private resetEvent(): void {
    this.dataLines = [];
    this.hasData = false;
    this.eventName = '';
  }
}

/**
 * The events of a `text/event-stream` response body, decoded as UTF-8 (multi-byte characters may be split
 * across chunks). Stops reading when the consumer stops iterating.
 */
export async function* readSseStream(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        yield* parser.push(decoder.decode());
        parser.end();
        return;
      }
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    // Also runs when the consumer breaks out early: release the connection.
    reader.cancel().catch(() => undefined);
  }
}

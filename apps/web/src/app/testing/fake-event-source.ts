import type { EventSourceLike } from '../core/event-stream';

/** For specs: an EventSource the test drives by hand (provide it through `EVENT_SOURCE_FACTORY`). */
export class FakeEventSource implements EventSourceLike {
  readyState = 0;
  onopen: ((event: Event) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  closed = false;
  private readonly listeners = new Map<
    string,
    ((event: MessageEvent<string>) => void)[]
  >();

  constructor(readonly url: string) {}

  addEventListener(
    type: string,
    listener: (event: MessageEvent<string>) => void,
  ): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  close(): void {
    this.closed = true;
    this.readyState = 2;
  }

  open(): void {
    this.readyState = 1;
    this.onopen?.(new Event('open'));
  }

  /** Delivers one SSE event; `data` is sent as JSON. */
  emit(type: string, data: unknown): void {
    this.emitRaw(type, JSON.stringify(data));
  }

  /** Delivers one SSE event with `data` as the text on the wire, e.g. to send something that is not JSON. */
  emitRaw(type: string, data: string): void {
    for (const listener of this.listeners.get(type) ?? [])
      listener(new MessageEvent(type, { data }));
  }

  fail(readyState: number): void {
    this.readyState = readyState;
    this.onerror?.(new Event('error'));
  }
}

/** A factory for `EVENT_SOURCE_FACTORY` that keeps every source it made. */
export function fakeEventSources(): {
  sources: FakeEventSource[];
  factory: (url: string) => FakeEventSource;
} {
  const sources: FakeEventSource[] = [];
  return {
    sources,
    factory: (url: string) => {
      const source = new FakeEventSource(url);
      sources.push(source);
      return source;
    },
  };
}

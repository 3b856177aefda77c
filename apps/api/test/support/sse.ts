export interface SseEvent {
  event: string;
  data: unknown;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** Resolves with the first event that matches, or rejects after `timeoutMs`. */
  next(
    match?: (event: SseEvent) => boolean,
    timeoutMs?: number,
  ): Promise<SseEvent>;
  /** Waits for the server to end the stream and returns every event not yet taken by next(). */
  rest(timeoutMs?: number): Promise<SseEvent[]>;
  close(): void;
}

export interface SseRequest {
  method?: 'GET' | 'POST';
  /** Sent as JSON. */
  body?: unknown;
}

/** Opens a server-sent-events stream with fetch and parses its events as they arrive. */
export async function openSse(
  url: string,
  headers: Record<string, string> = {},
  request: SseRequest = {},
): Promise<SseStream> {
  const controller = new AbortController();
  const res = await fetch(url, {
    method: request.method ?? 'GET',
    headers: {
      Accept: 'text/event-stream',
      ...(request.body !== undefined
        ? { 'Content-Type': 'application/json' }
        : {}),
      ...headers,
    },
    body: request.body !== undefined ? JSON.stringify(request.body) : undefined,
    signal: controller.signal,
  });
  const queue: SseEvent[] = [];
  const waiters: Array<() => void> = [];
  let buffer = '';
  let ended = !(res.ok && res.body);
  if (res.ok && res.body) {
    void (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: ?(.*)$/m.exec(block)?.[1] ?? 'message';
            const data = block
              .split('\n')
              .filter((l) => l.startsWith('data:'))
              .map((l) => l.replace(/^data: ?/, ''))
              .join('\n');
            if (!data) continue;
            queue.push({ event, data: JSON.parse(data) });
            waiters.splice(0).forEach((wake) => wake());
          }
        }
      } catch {
        // aborted
      }
      ended = true;
      waiters.splice(0).forEach((wake) => wake());
    })();
  }
  return {
    status: res.status,
    headers: res.headers,
    async next(match = () => true, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const index = queue.findIndex(match);
        if (index >= 0) return queue.splice(index, 1)[0];
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(
            `no matching SSE event within ${timeoutMs} ms (got ${JSON.stringify(queue)})`,
          );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    async rest(timeoutMs = 10000) {
      const deadline = Date.now() + timeoutMs;
      while (!ended) {
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(
            `the SSE stream did not end within ${timeoutMs} ms (got ${JSON.stringify(queue)})`,
          );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return queue.splice(0);
    },
    close: () => controller.abort(),
  };
}

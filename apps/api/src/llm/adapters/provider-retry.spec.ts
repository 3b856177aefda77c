import { LlmProviderError, type LlmErrorKind } from '../llm-adapter';
import {
  isTransient,
  MAX_RETRY_AFTER_MS,
  retryAfterMs,
  sendWithRetries,
} from './provider-retry';

const headers =
  (values: Record<string, string>) =>
  (name: string): string | undefined =>
    values[name];

describe('provider retries', () => {
  it.each<[LlmErrorKind, number | undefined, boolean]>([
    ['network', undefined, true],
    ['rate-limit', 429, true],
    ['server', 500, true],
    ['server', 503, true],
    // An error event inside a stream that had started: not a failed request.
    ['server', undefined, false],
    ['bad-request', 408, true],
    ['bad-request', 409, true],
    ['bad-request', 400, false],
    ['bad-request', 404, false],
    ['bad-request', 422, false],
    ['auth', 401, false],
    ['quota', 402, false],
    ['quota', 429, false],
    ['budget', undefined, false],
    ['stalled', undefined, false],
    ['aborted', undefined, false],
    ['unknown', undefined, false],
  ])('treats %s (%s) as transient: %s', (kind, status, expected) => {
    expect(isTransient(new LlmProviderError(kind, 'x', status))).toBe(expected);
  });

  it('reads Retry-After as seconds, an HTTP date or retry-after-ms', () => {
    const now = Date.parse('2026-11-29T05:00:00Z');
    expect(retryAfterMs(headers({ 'retry-after': '2' }), now)).toBe(2_000);
    expect(retryAfterMs(headers({ 'retry-after': '0.5' }), now)).toBe(500);
    expect(
      retryAfterMs(
        headers({ 'retry-after': 'Sun, 29 Nov 2026 05:00:03 GMT' }),
        now,
      ),
    ).toBe(3_000);
    expect(retryAfterMs(headers({ 'retry-after-ms': '120' }), now)).toBe(120);
    expect(retryAfterMs(headers({ 'retry-after': 'soon' }), now)).toBe(
      undefined,
    );
    expect(retryAfterMs(headers({}), now)).toBe(undefined);
  });

  it('does not wait for a Retry-After longer than the cap', async () => {
    let attempts = 0;
    const failing = sendWithRetries(
      async () => {
        attempts += 1;
        throw new Error('429');
      },
      {
        signal: new AbortController().signal,
        classify: () => new LlmProviderError('rate-limit', 'slow down', 429),
        retryAfter: () => MAX_RETRY_AFTER_MS + 1,
      },
    );
    await expect(failing).rejects.toThrow('429');
    expect(attempts).toBe(1);
  });
});

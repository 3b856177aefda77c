import { createServer } from 'node:net';
import {
  startFakeBraveServer,
  type FakeBraveServer,
} from '../../../../tools/fake-brave/fake-brave-server';
import type { AppConfig } from '../config/app-config';
import {
  BraveSearchClient,
  WebSearchError,
  clampCount,
  plainText,
} from './brave-search-client';

const KEY = 'BSA-unit-test-key-00000000000042';

function clientFor(braveBaseUrl: string, timeoutMs = 2_000): BraveSearchClient {
  return new BraveSearchClient({
    webSearch: { braveBaseUrl, timeoutMs },
  } as AppConfig);
}

async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

describe('BraveSearchClient', () => {
  let brave: FakeBraveServer;
  beforeAll(async () => (brave = await startFakeBraveServer()));
  afterEach(() => brave.reset());
  afterAll(() => brave.close());

  it('turns Brave HTML into plain text', () => {
    expect(
      plainText(
        '<strong>Angular</strong> &amp; signals: &quot;fast&quot; &#39;ok&#39; &#x2014; a&nbsp;b &lt;tag&gt; &bogus;',
      ),
    ).toBe('Angular & signals: "fast" \'ok\' — a b <tag> &bogus;');
    expect(plainText(undefined)).toBe('');
    expect(clampCount(undefined)).toBe(5);
    expect(clampCount(50)).toBe(20);
    expect(clampCount(0)).toBe(1);
  });

  it('drops results without an http(s) url and never returns more than asked', async () => {
    brave.enqueue({
      results: [
        { title: 'Bad', url: 'javascript:alert(1)', description: 'x' },
        ...Array.from({ length: 4 }, (_, i) => ({
          title: `T${i}`,
          url: `https://example.com/${i}`,
          description: `d${i}`,
        })),
      ],
    });
    const results = await clientFor(brave.baseUrl).search({
      apiKey: KEY,
      query: 'q',
      count: 2,
    });
    expect(results).toEqual([
      { title: 'T0', url: 'https://example.com/0', snippet: 'd0' },
      { title: 'T1', url: 'https://example.com/1', snippet: 'd1' },
    ]);
    expect(brave.requests[0].query).toEqual({ q: 'q', count: '2' });
  });

  it('explains an unreachable server, a caller abort and an answer that is not JSON, without the key', async () => {
    const unreachable = clientFor(
      `http://127.0.0.1:${await deadPort()}/res/v1`,
    );
    await expect(
      unreachable.search({ apiKey: KEY, query: 'q' }),
    ).rejects.toThrow(/^Could not reach Brave Search \(ECONNREFUSED\)\.$/);

    brave.enqueue({ results: [], delayMs: 5_000 });
    const controller = new AbortController();
    const cancelled = clientFor(brave.baseUrl).search({
      apiKey: KEY,
      query: 'q',
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 50);
    await expect(cancelled).rejects.toThrow('The search was cancelled.');

    brave.enqueue({ status: 200, body: '<html>not json</html>' });
    await expect(
      clientFor(brave.baseUrl).search({ apiKey: KEY, query: 'q' }),
    ).rejects.toThrow('Brave Search sent an answer that is not JSON.');

    brave.enqueue({ status: 422, detail: `Bad token ${KEY} in request` });
    const error = await clientFor(brave.baseUrl)
      .search({ apiKey: KEY, query: 'q' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebSearchError);
    expect((error as Error).message).toBe(
      'Brave Search refused the search (HTTP 422): Bad token •••• in request',
    );
  });
});

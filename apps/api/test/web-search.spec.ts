import type { ChatSummary } from '@metatronos/shared-types';
import type TestAgent from 'supertest/lib/agent';
import {
  fakeBraveResults,
  startFakeBraveServer,
  type FakeBraveServer,
} from '../../../tools/fake-brave/fake-brave-server';
import {
  fakeDuckDuckGoResults,
  startFakeDuckDuckGoServer,
  type FakeDuckDuckGoServer,
} from '../../../tools/fake-duckduckgo/fake-duckduckgo-server';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

const BRAVE_KEY = 'BSA-test-brave-key-000000009876';
const TIMEOUT_MS = 1_500;

describe('web search', () => {
  let fake: Fake;
  let brave: FakeBraveServer;
  let ddg: FakeDuckDuckGoServer;
  let t: TestApp;
  let owner: TestAgent;
  let client: ChatClient;

  beforeAll(async () => {
    fake = await startFakeProviders();
    brave = await startFakeBraveServer();
    ddg = await startFakeDuckDuckGoServer();
    t = await createTestApp({
      env: {
        BRAVE_SEARCH_BASE_URL: brave.baseUrl,
        DUCKDUCKGO_BASE_URL: ddg.url,
        WEB_SEARCH_TIMEOUT_MS: String(TIMEOUT_MS),
      },
    });
    owner = await t.owner();
    await useModel(t, 'gpt-4.1-mini');
    client = await chatClient(t);
  });
  afterEach(() => {
    fake.reset();
    brave.reset();
    ddg.reset();
  });
  afterAll(async () => {
    await t.close();
    await brave.close();
    await ddg.close();
    await fake.close();
    fake.restoreEnv();
  });

  const setKey = (braveApiKey: string | null) =>
    owner.patch('/api/settings').send({ braveApiKey }).expect(200);
  /** A chat in the web mode, where web_search is offered (capability gating). */
  const newChat = async (): Promise<ChatSummary> => {
    const chat: ChatSummary = (
      await owner.post('/api/chats').send({}).expect(201)
    ).body;
    await owner
      .patch(`/api/chats/${chat.id}`)
      .send({ mode: 'web' })
      .expect(200);
    return chat;
  };
  const toolNames = (index: number): string[] =>
    (fake.openai.requests[index].body.tools ?? []).map(
      (tool: { function: { name: string } }) => tool.function.name,
    );
  const systemPrompt = (index: number): string =>
    fake.openai.requests[index].body.messages[0].content;

  /** One chat turn where the model calls web_search with `args`, then answers; returns the parsed tool result. */
  async function searchTurn(
    args: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const chat = await newChat();
    fake.openai.enqueue(
      { toolCalls: [{ id: 'call_ws', name: 'web_search', arguments: args }] },
      { text: ['Here is what I found.'] },
    );
    const events = await client.send(chat.id, 'search the web please');
    const [result] = eventsNamed(events, 'tool_result') as {
      name: string;
      result: string;
    }[];
    expect(result.name).toBe('web_search');
    return JSON.parse(result.result);
  }

  describe('without a Brave key: DuckDuckGo', () => {
    it('offers web_search and lists it in the prompt', async () => {
      const chat = await newChat();
      fake.openai.enqueue({ text: ['Hi.'] });
      await client.send(chat.id, 'hello');
      expect(toolNames(0)).toContain('web_search');
      expect(systemPrompt(0)).toContain('- **web_search**:');
    });

    it('searches DuckDuckGo’s HTML results: ads dropped, links unwrapped, plain text, the Brave shape', async () => {
      ddg.enqueue({
        results: [
          {
            title: 'Angular &amp; <b>Signals</b>',
            url: 'https://angular.dev/guide/signals',
            snippet: 'Learn <b>signals</b> &mdash; the &quot;new&quot; way.',
          },
          {
            title: 'Not a web page',
            url: 'javascript:alert(1)',
            snippet: 'x',
          },
          ...fakeDuckDuckGoResults('angular', 10),
        ],
      });
      const result = await searchTurn({
        q: '  angular signals ',
        max_results: 3,
      });
      expect(result).toEqual({
        query: 'angular signals',
        engine: 'duckduckgo',
        results: [
          {
            title: 'Angular & Signals',
            url: 'https://angular.dev/guide/signals',
            snippet: 'Learn signals — the "new" way.',
          },
          {
            title: 'angular – page 1',
            url: 'https://example.org/angular/1?a=1&b=2',
            snippet: 'All about angular & friends, part 1.',
          },
          {
            title: 'angular – page 2',
            url: 'https://example.org/angular/2?a=1&b=2',
            snippet: 'All about angular & friends, part 2.',
          },
        ],
      });
      expect(ddg.requests).toHaveLength(1);
      expect(ddg.requests[0]).toMatchObject({
        method: 'POST',
        path: '/html/',
        q: 'angular signals',
      });
      expect(brave.requests).toHaveLength(0);
    });

    it("marks the turn: results are other sites' words, and the next request says so", async () => {
      ddg.enqueue({ results: fakeDuckDuckGoResults('tea', 3) });
      const chat = await newChat();
      fake.openai.enqueue(
        {
          toolCalls: [
            { id: 'call_ws', name: 'web_search', arguments: { q: 'tea' } },
          ],
        },
        { text: ['Found some.'] },
      );
      const events = await client.send(chat.id, 'search the web please');
      const [result] = eventsNamed(events, 'tool_result') as {
        taint?: { by: string; text: string } | null;
      }[];
      expect(result.taint).toMatchObject({ by: 'web_search' });
      expect(systemPrompt(1)).toContain('## Third-party content in this turn');
      expect(systemPrompt(0)).not.toContain('Third-party content in this turn');
    });

    it('asks for 5 by default and gives at most 20', async () => {
      ddg.enqueue({ results: fakeDuckDuckGoResults('tea', 30) });
      expect((await searchTurn({ q: 'tea' }))['results']).toHaveLength(5);
      ddg.enqueue({ results: fakeDuckDuckGoResults('tea', 30) });
      expect(
        (await searchTurn({ q: 'tea', max_results: 20 }))['results'],
      ).toHaveLength(20);
      ddg.enqueue({ results: [] });
      expect(await searchTurn({ q: 'nothing' })).toEqual({
        query: 'nothing',
        engine: 'duckduckgo',
        results: [],
      });
    });

    it('gives the model a clear error for a bot check, an outage and a timeout', async () => {
      ddg.enqueue({ botCheck: true });
      expect(await searchTurn({ q: 'a' })).toEqual({
        error:
          'DuckDuckGo answered with a bot check instead of results (too many searches from this address). Try again later, or save a Brave Search key.',
      });
      ddg.enqueue({ status: 503 });
      expect(await searchTurn({ q: 'b' })).toEqual({
        error: 'DuckDuckGo is having trouble (HTTP 503). Try again later.',
      });
      ddg.enqueue({ status: 429 });
      expect((await searchTurn({ q: 'c' }))['error']).toMatch(
        /^DuckDuckGo refused the search \(HTTP 429\): too many searches/,
      );
      ddg.enqueue({ results: [], delayMs: TIMEOUT_MS + 3_000 });
      expect(await searchTurn({ q: 'slow' })).toEqual({
        error: 'DuckDuckGo did not answer within 1.5 s.',
      });
    });

    it('tests DuckDuckGo on the test route', async () => {
      ddg.enqueue({ results: fakeDuckDuckGoResults('MetatronOS', 4) });
      const res = await owner.post('/api/web-search/test').send({}).expect(200);
      expect(res.body).toEqual({
        ok: true,
        engine: 'duckduckgo',
        results: 4,
        durationMs: expect.any(Number),
        sample: {
          title: 'MetatronOS – page 1',
          url: 'https://example.org/MetatronOS/1?a=1&b=2',
        },
      });
      expect(ddg.requests[0].q).toBe('MetatronOS');
      ddg.enqueue({ botCheck: true });
      expect(
        (await owner.post('/api/web-search/test').send({}).expect(200)).body,
      ).toMatchObject({ ok: false, engine: 'duckduckgo' });
      expect(brave.requests).toHaveLength(0);
    });
  });

  describe('with a Brave key', () => {
    beforeAll(() => setKey(BRAVE_KEY));

    it('keeps the key masked in the settings', async () => {
      const settings = (await owner.get('/api/settings').expect(200)).body;
      expect(settings.braveApiKey).toBe('••••9876');
    });

    it('offers web_search with its schema and lists it in the prompt with the citation rule', async () => {
      const chat = await newChat();
      fake.openai.enqueue({ text: ['Hi.'] });
      await client.send(chat.id, 'hello');
      expect(toolNames(0)).toContain('web_search');
      const spec = fake.openai.requests[0].body.tools.find(
        (tool: { function: { name: string } }) =>
          tool.function.name === 'web_search',
      );
      expect(spec.function.parameters).toMatchObject({
        required: ['q'],
        properties: {
          q: { type: 'string', maxLength: 400 },
          max_results: { type: 'integer', minimum: 1, maximum: 20 },
        },
      });
      expect(systemPrompt(0)).toMatch(
        /- \*\*web_search\*\*: .*cite the results you used as Markdown links/,
      );
      const prompt = (
        await owner.get('/api/system-instruction/prompt').expect(200)
      ).body.prompt as string;
      // A new chat's prompt (the default mode) names web_search under the web mode.
      expect(prompt).toMatch(/- web: web_search/);
      expect(prompt).not.toContain(BRAVE_KEY);
    });

    it('runs a search in a chat turn: Brave gets the token and query, the model gets plain-text results', async () => {
      brave.enqueue({
        results: [
          {
            title: 'Angular &amp; <b>Signals</b>',
            url: 'https://angular.dev/guide/signals',
            description:
              'Learn <strong>signals</strong> &mdash; the &quot;new&quot; way.',
          },
          ...fakeBraveResults('angular', 11),
        ],
      });
      const result = await searchTurn({
        q: '  angular signals ',
        max_results: 3,
      });
      expect(result).toEqual({
        query: 'angular signals',
        engine: 'brave',
        results: [
          {
            title: 'Angular & Signals',
            url: 'https://angular.dev/guide/signals',
            snippet: 'Learn signals — the "new" way.',
          },
          {
            title: 'angular – result 1',
            url: 'https://example.com/angular/1',
            snippet: 'About angular & more, part 1.',
          },
          {
            title: 'angular – result 2',
            url: 'https://example.com/angular/2',
            snippet: 'About angular & more, part 2.',
          },
        ],
      });

      expect(brave.requests).toHaveLength(1);
      const [search] = brave.requests;
      expect(search.path).toBe('/res/v1/web/search');
      expect(search.query).toEqual({ q: 'angular signals', count: '3' });
      expect(search.token).toBe(BRAVE_KEY);
      expect(search.headers['accept']).toBe('application/json');

      // The result reached the model in the follow-up request, and the key did not.
      const followUp = fake.openai.requests[1].body.messages;
      expect(followUp.at(-2)).toMatchObject({
        role: 'assistant',
        tool_calls: [{ id: 'call_ws', function: { name: 'web_search' } }],
      });
      expect(followUp.at(-1)).toMatchObject({
        role: 'tool',
        tool_call_id: 'call_ws',
      });
      expect(JSON.parse(followUp.at(-1).content)).toEqual(result);
      expect(JSON.stringify(fake.openai.requests[1].body)).not.toContain(
        BRAVE_KEY,
      );
    });

    it('asks for 5 results by default and keeps at most that many', async () => {
      brave.enqueue({ results: fakeBraveResults('tea', 8) });
      const result = await searchTurn({ q: 'tea' });
      expect(brave.requests[0].query).toEqual({ q: 'tea', count: '5' });
      expect(result['results']).toHaveLength(5);

      brave.enqueue({ results: fakeBraveResults('tea', 30) });
      expect(
        (await searchTurn({ q: 'tea', max_results: 20 }))['results'],
      ).toHaveLength(20);
      expect(brave.requests[1].query['count']).toBe('20');
      expect(ddg.requests).toHaveLength(0);
    });

    it('gives the model a clear error for a refused key, the rate limit, a Brave outage and a timeout', async () => {
      brave.enqueue({
        status: 401,
        detail: 'The provided subscription token is invalid.',
      });
      expect(await searchTurn({ q: 'a' })).toEqual({
        error:
          'The Brave Search key was refused (HTTP 401). Check the key on the Tools page.',
      });

      brave.enqueue({
        status: 429,
        detail: 'Request rate limit exceeded for plan.',
      });
      expect((await searchTurn({ q: 'b' }))['error']).toMatch(
        /^Brave Search rate limit reached \(HTTP 429\)/,
      );

      brave.enqueue({ status: 503 });
      expect(await searchTurn({ q: 'c' })).toEqual({
        error: 'Brave Search is having trouble (HTTP 503). Try again later.',
      });

      brave.enqueue({
        results: fakeBraveResults('slow', 3),
        delayMs: TIMEOUT_MS + 3_000,
      });
      const started = Date.now();
      expect(await searchTurn({ q: 'slow' })).toEqual({
        error: 'Brave Search did not answer within 1.5 s.',
      });
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 2_500);
    });

    it('refuses bad arguments without calling Brave', async () => {
      expect(await searchTurn({ q: '   ' })).toEqual({
        error: 'q must not be empty',
      });
      expect(await searchTurn({ q: 'x', max_results: 50 })).toEqual({
        error: "Argument 'max_results' must be at most 20",
      });
      expect(await searchTurn({ q: 'x', max_results: 0 })).toEqual({
        error: "Argument 'max_results' must be at least 1",
      });
      expect(await searchTurn({ q: 'x'.repeat(401) })).toEqual({
        error: "Argument 'q' is 401 characters; the limit is 400",
      });
      expect(await searchTurn({})).toEqual({
        error: "Missing required argument 'q'",
      });
      expect(brave.requests).toHaveLength(0);
      expect(ddg.requests).toHaveLength(0);
    });

    describe('POST /api/web-search/test', () => {
      it('searches "MetatronOS" by default and reports the count, the first result and the time', async () => {
        brave.enqueue({ results: fakeBraveResults('MetatronOS', 4) });
        const res = await owner
          .post('/api/web-search/test')
          .send({})
          .expect(200);
        expect(res.body).toEqual({
          ok: true,
          engine: 'brave',
          results: 4,
          durationMs: expect.any(Number),
          sample: {
            title: 'MetatronOS – result 1',
            url: 'https://example.com/MetatronOS/1',
          },
        });
        expect(brave.requests[0].query).toEqual({
          q: 'MetatronOS',
          count: '5',
        });
        expect(brave.requests[0].token).toBe(BRAVE_KEY);
      });

      it('searches the given query; no results is still ok', async () => {
        brave.enqueue({ results: [] });
        const res = await owner
          .post('/api/web-search/test')
          .send({ query: 'nothing at all' })
          .expect(200);
        expect(res.body).toMatchObject({ ok: true, results: 0, sample: null });
        expect(brave.requests[0].query['q']).toBe('nothing at all');
      });

      it('answers 200 with ok: false and the reason when Brave refuses, never the key', async () => {
        brave.enqueue({
          status: 403,
          detail: `token ${BRAVE_KEY} is not allowed`,
        });
        const refused = await owner
          .post('/api/web-search/test')
          .send({})
          .expect(200);
        expect(refused.body).toEqual({
          ok: false,
          engine: 'brave',
          error:
            'The Brave Search key was refused (HTTP 403). Check the key on the Tools page.',
          durationMs: expect.any(Number),
        });
        brave.enqueue({ status: 400, detail: `token ${BRAVE_KEY} is odd` });
        const odd = await owner
          .post('/api/web-search/test')
          .send({})
          .expect(200);
        expect(odd.body.error).toBe(
          'Brave Search refused the search (HTTP 400): token •••• is odd',
        );
        expect(JSON.stringify([refused.body, odd.body])).not.toContain(
          BRAVE_KEY,
        );
      });

      it('rejects a bad body with 400 and calls nobody', async () => {
        const long = await owner
          .post('/api/web-search/test')
          .send({ query: 'q'.repeat(401) })
          .expect(400);
        expect(long.body.message).toEqual([
          'query must be shorter than or equal to 400 characters',
        ]);
        const notString = await owner
          .post('/api/web-search/test')
          .send({ query: 42 })
          .expect(400);
        expect(notString.body.message).toEqual(
          expect.arrayContaining(['query must be a string']),
        );
        await owner.post('/api/web-search/test').send({ count: 3 }).expect(400);
        expect(brave.requests).toHaveLength(0);
      });

      it('needs the owner session', async () => {
        await t.http().post('/api/web-search/test').send({}).expect(401);
        expect(brave.requests).toHaveLength(0);
      });
    });

    it('goes back to DuckDuckGo once the key is removed', async () => {
      await setKey(null);
      ddg.enqueue({ results: fakeDuckDuckGoResults('tea', 2) });
      expect(await searchTurn({ q: 'tea' })).toMatchObject({
        engine: 'duckduckgo',
      });
      expect(brave.requests).toHaveLength(0);
    });
  });
});

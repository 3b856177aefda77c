import type { UsageReport } from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import { WhatsAppAutoReplyService } from '../src/whatsapp/auto-reply/whatsapp-auto-reply.service';
import { WhatsAppAutoReplySettings } from '../src/whatsapp/auto-reply/whatsapp-auto-reply.settings';
import type { ReplaceableSocketFactory } from '../src/whatsapp/gateway/replaceable-socket.factory';
import { WhatsAppSocketFactory } from '../src/whatsapp/gateway/whatsapp-socket';
import { WhatsAppService } from '../src/whatsapp/gateway/whatsapp.service';
import { UsageRecorder } from '../src/usage/usage-recorder';
import { berlinWeek, settledRuns } from './support/automations-kit';
import {
  FakeWhatsAppSocketFactory,
  incoming,
} from './support/fake-whatsapp-socket';
import {
  chatClient,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

const week = berlinWeek();
// 00:30 in Berlin is 23:30 UTC the evening before: the owner's day is Monday.
const NOW = week.mondayAt('00:30');
const MONDAY = week.mondayAt('12:00').slice(0, 10);
const SUNDAY = new Date(Date.parse(`${MONDAY}T12:00:00Z`) - 86_400_000)
  .toISOString()
  .slice(0, 10);
const ALICE = '14155551234';

async function waitFor(check: () => Promise<boolean>, what: string) {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('Token usage (GET /api/usage)', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let chat: ChatClient;
  let whatsapp: FakeWhatsAppSocketFactory;

  beforeAll(async () => {
    fake = await startFakeProviders();
    whatsapp = new FakeWhatsAppSocketFactory();
    t = await createTestApp({
      now: new Date(NOW),
      beforeInit: (app) => {
        (
          app.get(WhatsAppSocketFactory) as ReplaceableSocketFactory
        ).replaceWith(whatsapp);
        Object.assign(app.get(WhatsAppAutoReplySettings), {
          perContactIntervalMs: 0,
          perMinute: 0,
          loopReplies: 0,
        });
      },
    });
    owner = await t.owner();
    await owner
      .patch('/api/settings')
      .send({ timezone: 'Europe/Berlin' })
      .expect(200);
    await useModel(t, 'gpt-4.1-mini');
    chat = await chatClient(t);
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  const usage = async (query = ''): Promise<UsageReport> =>
    (await owner.get(`/api/usage${query}`).expect(200)).body;
  const newChat = async (): Promise<string> =>
    (await owner.post('/api/chats').send({}).expect(201)).body.id;

  it('starts empty: every day of the last 30 (owner zone) at zero', async () => {
    const report = await usage();
    expect(report).toMatchObject({
      from: expect.any(String),
      to: MONDAY,
      timezone: 'Europe/Berlin',
      totals: { inputTokens: 0, outputTokens: 0, turns: 0, costUsd: 0 },
      byModel: [],
      bySource: [],
    });
    expect(report.byDay).toHaveLength(30);
    expect(report.byDay.at(-1)).toEqual({
      day: MONDAY,
      inputTokens: 0,
      outputTokens: 0,
      turns: 0,
      costUsd: 0,
    });
  });

  it('records what each provider reports, per source, model and owner day', async () => {
    // Chat on OpenAI, with a tool round: both model calls of the reply add up.
    fake.openai.enqueue(
      {
        toolCalls: [
          { name: 'save_memory', arguments: { memory: 'likes tea' } },
        ],
        usage: { promptTokens: 100, completionTokens: 10 },
      },
      { text: ['Noted.'], usage: { promptTokens: 130, completionTokens: 20 } },
    );
    await chat.send(await newChat(), 'remember I like tea');

    // Chat on Gemini (usageMetadata of the stream).
    await owner
      .patch('/api/settings')
      .send({ primaryModel: 'gemini-2.5-flash' })
      .expect(200);
    fake.gemini.enqueue({
      text: ['Hello ', 'there'],
      usage: { promptTokens: 300, completionTokens: 40 },
    });
    await chat.send(await newChat(), 'hi');
    await owner
      .patch('/api/settings')
      .send({ primaryModel: 'gpt-4.1-mini' })
      .expect(200);

    // A scheduled job run now.
    const job = (
      await owner
        .post('/api/cronjobs')
        .send({
          name: 'Digest',
          instruction: 'Summarise the day',
          cronExpression: '0 18 * * *',
        })
        .expect(201)
    ).body;
    fake.openai.enqueue({
      text: ['Digest done'],
      usage: { promptTokens: 1000, completionTokens: 50 },
    });
    await owner.post(`/api/cronjobs/${job.id}/run`).expect(202);
    await settledRuns(
      async () =>
        (await owner.get(`/api/cronjobs/${job.id}/runs`).expect(200)).body,
    );

    // A Pulse run now.
    fake.openai.enqueue({
      text: ['All quiet'],
      usage: { promptTokens: 2000, completionTokens: 60 },
    });
    await owner.post('/api/pulse/run').expect(202);
    await settledRuns(
      async () => (await owner.get('/api/pulse/runs').expect(200)).body,
    );

    // An auto-reply to a permitted WhatsApp contact.
    await owner.post('/api/whatsapp/connect').expect(200);
    await waitFor(async () => whatsapp.sockets.length > 0, 'a socket');
    whatsapp.latest.open();
    await owner
      .post('/api/whatsapp/permissions')
      .send({
        phoneNumber: ALICE,
        displayName: 'Alice',
        canRead: true,
        canReply: true,
      })
      .expect(200);
    fake.openai.enqueue({
      text: ['Hi Alice'],
      usage: { promptTokens: 400, completionTokens: 7 },
    });
    whatsapp.latest.upsert([
      incoming({
        id: 'USAGE1',
        from: `${ALICE}@s.whatsapp.net`,
        text: 'hello?',
        at: t.clock.now().getTime(),
      }),
    ]);
    await t.app.get(WhatsAppService).settled();
    await t.app.get(WhatsAppAutoReplyService).idle();

    const report = await usage(`?from=${MONDAY}&to=${MONDAY}`);
    expect(report.totals).toEqual({
      inputTokens: 100 + 130 + 300 + 1000 + 2000 + 400,
      outputTokens: 10 + 20 + 40 + 50 + 60 + 7,
      turns: 5,
      // At the shipped prices: gpt-4.1-mini $0.40 / $1.60, gemini-2.5-flash $0.30 / $2.50 per MTok.
      costUsd: 0.001877,
    });
    expect(report.byDay).toEqual([{ day: MONDAY, ...report.totals }]);
    expect(report.bySource).toEqual([
      {
        source: 'pulse',
        inputTokens: 2000,
        outputTokens: 60,
        turns: 1,
        costUsd: 0.000896,
      },
      {
        source: 'job',
        inputTokens: 1000,
        outputTokens: 50,
        turns: 1,
        costUsd: 0.00048,
      },
      {
        source: 'chat',
        inputTokens: 530,
        outputTokens: 70,
        turns: 2,
        costUsd: 0.00033,
      },
      {
        source: 'auto-reply',
        inputTokens: 400,
        outputTokens: 7,
        turns: 1,
        costUsd: 0.000171,
      },
    ]);
    expect(report.byModel).toEqual([
      {
        model: 'gpt-4.1-mini',
        provider: 'openai',
        inputTokens: 3630,
        outputTokens: 147,
        turns: 4,
        costUsd: 0.001687,
      },
      {
        model: 'gemini-2.5-flash',
        provider: 'gemini',
        inputTokens: 300,
        outputTokens: 40,
        turns: 1,
        costUsd: 0.00019,
      },
    ]);
    // 23:30 UTC on Sunday was Monday for the owner: nothing on Sunday.
    expect((await usage(`?from=${SUNDAY}&to=${SUNDAY}`)).totals.turns).toBe(0);
    // The rollups are one document per day, source and model.
    const db = t.app.get<Connection>(getConnectionToken());
    expect(await db.collection('usage').countDocuments()).toBe(5);
  });

  it('records nothing for a reply the provider refused', async () => {
    const before = (await usage(`?from=${MONDAY}&to=${MONDAY}`)).totals;
    fake.openai.enqueue({ status: 401, message: 'bad key' });
    await chat.send(await newChat(), 'hello');
    expect((await usage(`?from=${MONDAY}&to=${MONDAY}`)).totals).toEqual(
      before,
    );
  });

  it.each([
    ['gpt-4.1-mini', 'openai'],
    ['gemini-2.5-flash', 'gemini'],
  ] as const)(
    'counts the model calls of a reply that failed after a tool round (%s)',
    async (model, provider) => {
      await owner
        .patch('/api/settings')
        .send({ primaryModel: model })
        .expect(200);
      const before = (await usage(`?from=${MONDAY}&to=${MONDAY}`)).totals;
      fake[provider].enqueue(
        {
          toolCalls: [{ name: 'save_memory', arguments: { memory: 'x' } }],
          usage: { promptTokens: 70, completionTokens: 7 },
        },
        { status: 500, message: 'upstream broke' },
      );
      const events = await chat.send(await newChat(), 'remember x');
      expect(events.map((e) => e.event)).toContain('error');
      expect((await usage(`?from=${MONDAY}&to=${MONDAY}`)).totals).toEqual({
        inputTokens: before.inputTokens + 70,
        outputTokens: before.outputTokens + 7,
        turns: before.turns + 1,
        costUsd: expect.any(Number),
      });
      await owner
        .patch('/api/settings')
        .send({ primaryModel: 'gpt-4.1-mini' })
        .expect(200);
    },
  );

  it.each([
    [
      '?from=2026-13-01',
      "from must be a date written YYYY-MM-DD (got '2026-13-01')",
    ],
    [
      '?from=yesterday',
      "from must be a date written YYYY-MM-DD (got 'yesterday')",
    ],
    [
      '?to=2026-02-30',
      "to must be a date written YYYY-MM-DD (got '2026-02-30')",
    ],
    ['?from=2026-03-02&to=2026-03-01', 'from must be on or before to'],
    [
      '?from=2025-01-01&to=2026-01-02',
      'The range may span at most 366 days (it spans 367)',
    ],
    ['?days=3', 'property days should not exist'],
  ])('refuses %s with 400', async (query, message) => {
    const res = await owner.get(`/api/usage${query}`).expect(400);
    expect(JSON.stringify(res.body.message)).toContain(message);
  });

  it('loses no count when many replies of the same day, source and model finish at once', async () => {
    const recorder = t.app.get(UsageRecorder);
    const day = '2026-02-01';
    await Promise.all(
      Array.from({ length: 40 }, () =>
        recorder.record(
          {
            source: 'cron',
            model: 'gpt-4.1-mini',
            provider: 'openai',
            usage: { inputTokens: 10, outputTokens: 1 },
          },
          { day },
        ),
      ),
    );
    const report = await usage(`?from=${day}&to=${day}`);
    const row = report.byDay.find((d) => d.day === day);
    expect(row).toMatchObject({ inputTokens: 400, outputTokens: 40 });
  });

  it('accepts a whole leap year (366 days)', async () => {
    const report = await usage('?from=2028-01-01&to=2028-12-31');
    expect(report.byDay).toHaveLength(366);
  });

  it('needs the owner session', async () => {
    await t.http().get('/api/usage').expect(401);
  });
});

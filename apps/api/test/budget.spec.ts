import type {
  BudgetView,
  ChatMessage,
  CronJobView,
  CronRunView,
} from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import mongoose, { type Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import { keptDatabase, settledRuns, tickAt } from './support/automations-kit';
import { openSse, type SseEvent } from './support/sse';
import {
  eventsNamed,
  startFakeProviders,
  useModel,
} from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';
import {
  FakeWhatsAppSocketFactory,
  incoming,
} from './support/fake-whatsapp-socket';
import { WhatsAppAutoReplyService } from '../src/whatsapp/auto-reply/whatsapp-auto-reply.service';
import { WhatsAppAutoReplySettings } from '../src/whatsapp/auto-reply/whatsapp-auto-reply.settings';
import type { ReplaceableSocketFactory } from '../src/whatsapp/gateway/replaceable-socket.factory';
import { WhatsAppSocketFactory } from '../src/whatsapp/gateway/whatsapp-socket';
import { WhatsAppService } from '../src/whatsapp/gateway/whatsapp.service';

const ALICE = '14155551234';
const OWN_PHONE = '19876543210';

async function waitFor(check: () => Promise<boolean> | boolean, what: string) {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

// Noon in Berlin on a Monday of next year: the owner's day is that Monday.
const NOW = `${new Date().getUTCFullYear() + 1}-03-02T11:00:00Z`;
/**
 * Prices set by the test: input free, output $1 per 1,000 tokens, so a call's
 * worst case is its output limit × $0.001, whatever the prompt's size.
 */
const PRICES = [
  { model: 'gpt-4.1-mini', inputPerMTok: 0, outputPerMTok: 1000 },
];
/** Output limits: a job's call may cost up to $0.10, a chat call up to $0.10. */
const LIMITS = { job: 100, chat: 100, pulse: 100, 'auto-reply': 100 };

describe('Spend control (budgets, prices, reservations)', () => {
  let fake: Fake;

  beforeAll(async () => {
    fake = await startFakeProviders();
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await fake.close();
    fake.restoreEnv();
  });

  async function boot(
    budget: Record<string, number | null>,
    database?: ReturnType<typeof keptDatabase>,
    whatsapp?: FakeWhatsAppSocketFactory,
  ): Promise<{ t: TestApp; owner: TestAgent }> {
    const t = await createTestApp({
      now: new Date(NOW),
      database,
      beforeInit: whatsapp
        ? (app) => {
            (
              app.get(WhatsAppSocketFactory) as ReplaceableSocketFactory
            ).replaceWith(whatsapp);
            Object.assign(app.get(WhatsAppAutoReplySettings), {
              perContactIntervalMs: 0,
              perMinute: 0,
              loopReplies: 0,
            });
          }
        : undefined,
    });
    const owner = await t.owner();
    await owner
      .patch('/api/settings')
      .send({
        timezone: 'Europe/Berlin',
        modelPrices: PRICES,
        outputLimits: LIMITS,
      })
      .expect(200);
    await useModel(t, 'gpt-4.1-mini', {
      dailyUsd: null,
      monthlyUsd: null,
      unattendedDailyUsd: null,
      ...budget,
    });
    return { t, owner };
  }

  const budgetOf = async (owner: TestAgent): Promise<BudgetView> =>
    (await owner.get('/api/budget').expect(200)).body;
  const createJob = async (
    owner: TestAgent,
    name: string,
  ): Promise<CronJobView> =>
    (
      await owner
        .post('/api/cronjobs')
        .send({
          name,
          instruction: 'Check things.',
          cronExpression: '0 3 * * *',
        })
        .expect(201)
    ).body;
  const runsOf =
    (owner: TestAgent, id: string) => async (): Promise<CronRunView[]> =>
      (await owner.get(`/api/cronjobs/${id}/runs`).expect(200)).body;
  const runJob = async (owner: TestAgent, id: string): Promise<CronRunView> => {
    const before = (await runsOf(owner, id)()).length;
    await owner.post(`/api/cronjobs/${id}/run`).expect(202);
    return (await settledRuns(runsOf(owner, id), before + 1))[0];
  };

  /** Sends a chat message (with `allowOverBudget` when asked) and returns the reply's events. */
  async function send(
    t: TestApp,
    chatId: string,
    content: string,
    allowOverBudget?: boolean,
  ): Promise<SseEvent[]> {
    const { url, cookie } = await t.serve();
    const stream = await openSse(
      `${url}/api/chats/${chatId}/messages`,
      { Cookie: cookie },
      {
        method: 'POST',
        body: { content, ...(allowOverBudget ? { allowOverBudget } : {}) },
      },
    );
    expect(stream.status).toBe(200);
    return stream.rest();
  }

  it('skips a job run over the unattended cap with no provider request', async () => {
    const { t, owner } = await boot({ unattendedDailyUsd: 0.05 });
    try {
      const job = await createJob(owner, 'Costly');
      // The worst case ($0.10) does not fit under $0.05: the call never goes out.
      const run = await runJob(owner, job.id);
      expect(run).toMatchObject({ outcome: 'skipped', reason: 'budget' });
      expect(run.error).toContain(
        "Today's budget for unattended work (jobs, Pulse, auto-replies) of $0.05 would be passed",
      );
      expect(fake.openai.requests).toHaveLength(0);

      // A cap already used up: skipped before anything is written to the job's chat.
      await owner
        .patch('/api/settings')
        .send({ budget: { unattendedDailyUsd: 0 } })
        .expect(200);
      const messagesBefore = (
        await owner.get(`/api/chats/${run.chatId}/messages`).expect(200)
      ).body as ChatMessage[];
      const second = await runJob(owner, job.id);
      expect(second).toMatchObject({ outcome: 'skipped', reason: 'budget' });
      expect(second.error).toContain('is used ($0.00)');
      expect(
        (await owner.get(`/api/chats/${run.chatId}/messages`).expect(200)).body,
      ).toHaveLength(messagesBefore.length);
      expect(fake.openai.requests).toHaveLength(0);

      // The cap raised: the job runs, and its cost is counted.
      await owner
        .patch('/api/settings')
        .send({ budget: { unattendedDailyUsd: 1 } })
        .expect(200);
      fake.openai.enqueue({
        text: ['done'],
        usage: { promptTokens: 10, completionTokens: 40 },
      });
      expect(await runJob(owner, job.id)).toMatchObject({ outcome: 'success' });
      expect(fake.openai.requests).toHaveLength(1);
      // Every call carries its output limit.
      expect(fake.openai.requests[0].body).toMatchObject({
        max_completion_tokens: 100,
      });
      const budget = await budgetOf(owner);
      expect(budget).toMatchObject({
        caps: { dailyUsd: null, monthlyUsd: null, unattendedDailyUsd: 1 },
        spent: { todayUsd: 0.04, monthUsd: 0.04, unattendedTodayUsd: 0.04 },
        reservedUsd: 0,
        paused: null,
        state: 'ok',
        day: NOW.slice(0, 10),
      });
      const usage = (await owner.get('/api/usage').expect(200)).body;
      expect(usage.totals.costUsd).toBeCloseTo(0.04, 6);
      expect(usage.bySource).toEqual([
        expect.objectContaining({ source: 'job', costUsd: 0.04 }),
      ]);
    } finally {
      await t.close();
    }
  });

  it('lets 20 job runs started at once reach the provider at most 3 times under a cap that allows 3', async () => {
    const { t, owner } = await boot({ unattendedDailyUsd: 0.35 });
    try {
      const jobs: CronJobView[] = [];
      for (let i = 0; i < 20; i++)
        jobs.push(await createJob(owner, `Job ${i}`));
      // Each call costs its whole worst case ($0.10): three fit under $0.35, whatever the timing.
      fake.openai.fallback = {
        text: ['ok'],
        usage: { promptTokens: 5, completionTokens: 100 },
        chunkDelayMs: 50,
      };
      // All 20 are due at 03:00 (Berlin, UTC+1): one tick starts them in the same second.
      await tickAt(t, `${NOW.slice(0, 8)}03T02:00:00.200Z`);
      const runs: CronRunView[] = [];
      for (const job of jobs)
        runs.push((await settledRuns(runsOf(owner, job.id)))[0]);
      expect(fake.openai.requests).toHaveLength(3);
      const succeeded = runs.filter((r) => r.outcome === 'success');
      expect(succeeded).toHaveLength(fake.openai.requests.length);
      expect(succeeded.length).toBeGreaterThanOrEqual(1);
      expect(
        runs.filter((r) => r.outcome === 'skipped' && r.reason === 'budget'),
      ).toHaveLength(20 - succeeded.length);
      const budget = await budgetOf(owner);
      expect(budget.reservedUsd).toBe(0);
      expect(budget.spent.unattendedTodayUsd).toBeLessThanOrEqual(0.35);
    } finally {
      await t.close();
    }
  });

  it('stops an attended reply at the daily cap in plain words, and allows one reply over it', async () => {
    const { t, owner } = await boot({ dailyUsd: 0.15 });
    try {
      const chatId = (await owner.post('/api/chats').send({}).expect(201)).body
        .id;
      fake.openai.enqueue({
        text: ['First.'],
        usage: { promptTokens: 5, completionTokens: 100 },
      });
      expect(eventsNamed(await send(t, chatId, 'one'), 'done')).toHaveLength(1);
      // $0.10 spent: the next worst case ($0.10) would pass $0.15.
      let events = await send(t, chatId, 'two');
      expect(eventsNamed(events, 'error')).toEqual([
        expect.objectContaining({
          overBudget: true,
          message:
            "Today's budget of $0.15 would be passed: $0.10 is spent and this call could cost up to $0.10. Raise it in Settings, or allow this one reply.",
        }),
      ]);
      expect(fake.openai.requests).toHaveLength(1);

      fake.openai.enqueue({
        text: ['Allowed.'],
        usage: { promptTokens: 5, completionTokens: 100 },
      });
      events = await send(t, chatId, 'two', true);
      expect(eventsNamed(events, 'done')).toHaveLength(1);
      expect(fake.openai.requests).toHaveLength(2);

      // Only that one reply: now the cap is used, in the owner's words.
      events = await send(t, chatId, 'three');
      expect(eventsNamed(events, 'error')).toEqual([
        expect.objectContaining({
          message:
            "Today's budget of $0.15 is used ($0.20). Raise it in Settings, or allow this one reply.",
        }),
      ]);
      expect(fake.openai.requests).toHaveLength(2);
      expect(await budgetOf(owner)).toMatchObject({
        state: 'exceeded',
        spent: { todayUsd: 0.2 },
      });
    } finally {
      await t.close();
    }
  });

  it("pauses unattended work on a provider's 402 until the owner resumes it", async () => {
    const { t, owner } = await boot({});
    try {
      const job = await createJob(owner, 'Paid');
      fake.openai.enqueue({ status: 402, message: 'Insufficient credit' });
      const failed = await runJob(owner, job.id);
      expect(failed.outcome).toBe('error');
      expect(failed.error).toContain('no credit left');
      const paused = await budgetOf(owner);
      expect(paused.state).toBe('paused');
      expect(paused.paused?.reason).toContain('no credit left');
      expect(fake.openai.requests).toHaveLength(1);

      // The scheduler's next run does not call the provider.
      const skipped = await runJob(owner, job.id);
      expect(skipped).toMatchObject({ outcome: 'skipped', reason: 'budget' });
      expect(skipped.error).toContain('Unattended work is paused');
      expect(fake.openai.requests).toHaveLength(1);

      const resumed = (await owner.post('/api/budget/resume').expect(200))
        .body as BudgetView;
      expect(resumed).toMatchObject({ paused: null, state: 'ok' });
      fake.openai.enqueue({ text: ['back'] });
      expect(await runJob(owner, job.id)).toMatchObject({ outcome: 'success' });
      expect(fake.openai.requests).toHaveLength(2);
    } finally {
      await t.close();
    }
  });

  it('charges a reservation a crash left held at its worst case, once, at the next start', async () => {
    const database = keptDatabase();
    let { t, owner } = await boot({}, database);
    let connection = t.app.get<Connection>(getConnectionToken());
    try {
      // A reply whose provider answers nothing yet: its reservation is held.
      fake.openai.enqueue({ text: ['late'], stallAfter: 0 });
      const chatId = (await owner.post('/api/chats').send({}).expect(201)).body
        .id;
      const { url, cookie } = await t.serve();
      const stream = await openSse(
        `${url}/api/chats/${chatId}/messages`,
        { Cookie: cookie },
        { method: 'POST', body: { content: 'hello' } },
      );
      let held: Record<string, unknown>[] = [];
      for (let i = 0; i < 200 && held.length === 0; i++) {
        held = await connection
          .collection('budget_reservations')
          .find()
          .toArray();
        if (!held.length) await new Promise((r) => setTimeout(r, 20));
      }
      expect(held).toHaveLength(1);
      expect((await budgetOf(owner)).reservedUsd).toBeCloseTo(0.1, 6);
      stream.close();
      await t.close();
      // What a kill leaves: the reservation still in the database.
      const raw = await mongoose
        .createConnection(database.uri, { dbName: database.dbName })
        .asPromise();
      await raw.collection('budget_reservations').deleteMany({});
      await raw.collection('budget_reservations').insertMany(held as never[]);
      await raw.close();

      ({ t, owner } = await boot({}, database));
      connection = t.app.get<Connection>(getConnectionToken());
      const budget = await budgetOf(owner);
      expect(budget.reservedUsd).toBe(0);
      expect(budget.spent.todayUsd).toBeCloseTo(0.1, 6);
      expect(
        await connection.collection('budget_reservations').countDocuments(),
      ).toBe(0);
    } finally {
      await connection.dropDatabase().catch(() => undefined);
      await t.close();
    }
  });

  it('refuses bad prices, caps and limits with 400 and saves nothing', async () => {
    const { t, owner } = await boot({ dailyUsd: 5 });
    try {
      const before = (await owner.get('/api/settings').expect(200)).body;
      const bad: Array<[Record<string, unknown>, string]> = [
        [
          { budget: { dailyUsd: -1 } },
          'budget.dailyUsd must be a number from 0 to 10,000',
        ],
        [
          { budget: { monthlyUsd: 'lots' } },
          'budget.monthlyUsd must be a number',
        ],
        [
          { budget: { unattendedDailyUsd: 10_001 } },
          'budget.unattendedDailyUsd must be a number',
        ],
        [{ budget: { weeklyUsd: 3 } }, 'budget.weeklyUsd is not a cap'],
        [{ budget: 5 }, 'budget must be an object'],
        [
          {
            modelPrices: [
              { model: 'gpt-x', inputPerMTok: -0.1, outputPerMTok: 1 },
            ],
          },
          'modelPrices[0].inputPerMTok must be a number',
        ],
        [
          { modelPrices: [{ model: 'gpt-x', inputPerMTok: 1 }] },
          'modelPrices[0].outputPerMTok is required',
        ],
        [
          {
            modelPrices: [
              { model: 'gpt-x', inputPerMTok: 1, outputPerMTok: 1e9 },
            ],
          },
          'modelPrices[0].outputPerMTok must be a number',
        ],
        [
          { modelPrices: [{ model: '', inputPerMTok: 1, outputPerMTok: 1 }] },
          'modelPrices[0].model must be a model id',
        ],
        [
          {
            modelPrices: [
              { model: 'gpt-x', inputPerMTok: NaN, outputPerMTok: 1 },
            ],
          },
          'modelPrices[0].inputPerMTok must be a number',
        ],
        [
          { outputLimits: { chat: 0 } },
          'outputLimits.chat must be a whole number',
        ],
        [{ outputLimits: { fax: 100 } }, 'outputLimits.fax is not a source'],
      ];
      for (const [body, message] of bad) {
        const res = await owner
          .patch('/api/settings')
          .send({ ...body, timezone: 'Europe/Paris' })
          .expect(400);
        expect(JSON.stringify(res.body.message)).toContain(message);
      }
      expect((await owner.get('/api/settings').expect(200)).body).toEqual(
        before,
      );
      // Numbers written as strings are numbers; null is "no cap".
      const saved = (
        await owner
          .patch('/api/settings')
          .send({
            budget: { dailyUsd: '2.50', monthlyUsd: null },
            modelPrices: [
              {
                model: 'local/llama3',
                inputPerMTok: 0.01,
                outputPerMTok: '0.02',
              },
            ],
          })
          .expect(200)
      ).body;
      expect(saved.budget).toEqual({
        dailyUsd: 2.5,
        monthlyUsd: null,
        unattendedDailyUsd: null,
      });
      expect(saved.modelPrices).toEqual([
        { model: 'local/llama3', inputPerMTok: 0.01, outputPerMTok: 0.02 },
      ]);
      expect(saved.defaultModelPrices).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ model: 'gpt-4.1-mini' }),
          expect.objectContaining({ model: 'gemini-2.5-flash' }),
        ]),
      );
      // A chat message's allowOverBudget must be a boolean.
      const chatId = (await owner.post('/api/chats').send({}).expect(201)).body
        .id;
      await owner
        .post(`/api/chats/${chatId}/messages`)
        .send({ content: 'hi', allowOverBudget: 'yes' })
        .expect(400);
      expect(fake.openai.requests).toHaveLength(0);
    } finally {
      await t.close();
    }
  });

  it('starts a fresh install with $5 a day in total and $1 a day unattended', async () => {
    const t = await createTestApp({ now: new Date(NOW) });
    try {
      const owner = await t.owner();
      expect(
        (await owner.get('/api/settings').expect(200)).body.budget,
      ).toEqual({ dailyUsd: 5, monthlyUsd: null, unattendedDailyUsd: 1 });
      expect((await budgetOf(owner)).caps).toEqual({
        dailyUsd: 5,
        monthlyUsd: null,
        unattendedDailyUsd: 1,
      });
    } finally {
      await t.close();
    }
  });

  it('refuses an unpriced cloud model for unattended work, and asks about its price once in a chat', async () => {
    const { t, owner } = await boot({});
    try {
      await owner
        .patch('/api/settings')
        .send({ primaryModel: 'gpt-unknown-9' })
        .expect(200);
      const job = await createJob(owner, 'Unpriced');
      const run = await runJob(owner, job.id);
      expect(run).toMatchObject({ outcome: 'skipped', reason: 'budget' });
      expect(run.error).toContain(
        "The model 'gpt-unknown-9' has no known price",
      );
      expect(fake.openai.requests).toHaveLength(0);

      const chatId = (await owner.post('/api/chats').send({}).expect(201)).body
        .id;
      fake.openai.enqueue({ text: ['Hi.'] }, { text: ['Again.'] });
      await send(t, chatId, 'hello');
      await send(t, chatId, 'hello again');
      const replies = (
        (await owner.get(`/api/chats/${chatId}/messages`).expect(200))
          .body as ChatMessage[]
      ).filter((m) => m.role === 'assistant');
      expect(
        replies.map((m) => m.content.includes('has no known price')),
      ).toEqual([true, false]);
    } finally {
      await t.close();
    }
  });

  describe('with WhatsApp linked', () => {
    async function linked(budget: Record<string, number | null>) {
      const whatsapp = new FakeWhatsAppSocketFactory();
      const booted = await boot(budget, undefined, whatsapp);
      await booted.owner.post('/api/whatsapp/connect').expect(200);
      await waitFor(() => whatsapp.sockets.length > 0, 'a socket');
      whatsapp.latest.open(OWN_PHONE);
      await booted.owner
        .post('/api/whatsapp/permissions')
        .send({
          phoneNumber: ALICE,
          displayName: 'Alice',
          canRead: true,
          canReply: true,
        })
        .expect(200);
      return { ...booted, whatsapp };
    }

    it("keeps a contact's message while the budget refuses, and answers it once when the cap is raised", async () => {
      const { t, owner, whatsapp } = await linked({ unattendedDailyUsd: 0 });
      try {
        fake.openai.fallback = { text: ['Hi Alice'] };
        whatsapp.latest.upsert([
          incoming({
            id: 'HELD1',
            from: `${ALICE}@s.whatsapp.net`,
            text: 'are you there?',
            at: t.clock.now().getTime(),
          }),
        ]);
        await t.app.get(WhatsAppService).settled();
        await t.app.get(WhatsAppAutoReplyService).idle();
        expect(fake.openai.requests).toHaveLength(0);
        const toAlice = () =>
          whatsapp.latest.sent.filter((m) => m.jid.startsWith(ALICE));
        expect(toAlice()).toHaveLength(0);
        const db = t.app.get<Connection>(getConnectionToken());
        const stored = await db
          .collection('whatsapp_messages')
          .findOne({ _id: 'HELD1' as never });
        expect(stored).toMatchObject({ processing: 'pending' });
        expect(stored?.['budgetWaitSince']).toBeTruthy();

        // Hours later (past the stale window), the owner raises the cap: answered once.
        t.clock.advance(3 * 3_600_000);
        await owner
          .patch('/api/settings')
          .send({ budget: { unattendedDailyUsd: 1 } })
          .expect(200);
        await waitFor(() => toAlice().length > 0, 'the answer to Alice');
        await t.app.get(WhatsAppAutoReplyService).idle();
        expect(toAlice()).toEqual([
          expect.objectContaining({ content: { text: 'Hi Alice' } }),
        ]);
        // Another budget change does not answer it again.
        await owner
          .patch('/api/settings')
          .send({ budget: { unattendedDailyUsd: 2 } })
          .expect(200);
        await new Promise((resolve) => setTimeout(resolve, 200));
        await t.app.get(WhatsAppAutoReplyService).idle();
        expect(toAlice()).toHaveLength(1);
        expect(fake.openai.requests).toHaveLength(1);
        expect(
          await db
            .collection('whatsapp_messages')
            .findOne({ _id: 'HELD1' as never }),
        ).toMatchObject({ processing: 'done' });
      } finally {
        await t.close();
      }
    });

    it('tells the owner at 80% of a cap once per period, in the console and in their own chat', async () => {
      const { t, owner, whatsapp } = await linked({ dailyUsd: 1 });
      try {
        const { url, cookie } = await t.serve();
        const events = await openSse(`${url}/api/events`, { Cookie: cookie });
        const chatId = (await owner.post('/api/chats').send({}).expect(201))
          .body.id;
        const toSelf = () =>
          whatsapp.latest.sent.filter((m) => m.jid.startsWith(OWN_PHONE));
        // $0.85 of $1.00: 85%.
        fake.openai.enqueue({
          text: ['one'],
          usage: { promptTokens: 5, completionTokens: 850 },
        });
        await send(t, chatId, 'one');
        const notice = await events.next(
          (e) =>
            e.event === 'budget.changed' &&
            (e.data as { percent: number | null }).percent === 80,
          5_000,
        );
        expect(notice.data).toMatchObject({
          state: 'warning',
          cap: 'dailyUsd',
          percent: 80,
          message: "Today's budget is at 85%: $0.85 of $1.00.",
        });
        await waitFor(() => toSelf().length > 0, 'the notice in the own chat');
        expect(toSelf()[0].content.text).toContain("Today's budget is at 85%");
        // More spend under 100% sends nothing more.
        fake.openai.enqueue({
          text: ['two'],
          usage: { promptTokens: 5, completionTokens: 5 },
        });
        await send(t, chatId, 'two');
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(toSelf()).toHaveLength(1);
        events.close();
      } finally {
        await t.close();
      }
    });
  });
});

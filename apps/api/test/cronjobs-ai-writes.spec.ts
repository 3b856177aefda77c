import type {
  ChatSummary,
  CronJobView,
  CronRunView,
} from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import { Types, type Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import { CronScheduler } from '../src/automations/jobs/cron-scheduler';
import {
  berlinWeek,
  bootInBerlin,
  keptDatabase,
  settledRuns,
  tickAt,
} from './support/automations-kit';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  type ChatClient,
} from './support/llm-test-kit';
import type { TestApp, TestAppOptions } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;
type ToolCall = { name: string; arguments: Record<string, unknown> };

const week = berlinWeek();
const OWNED = 'is set by the app and cannot be written';
const MALFORMED = 'Delete it and create it again';

/** The AI's writes to `cronjobs`: checked like manage_cronjob, limited, and never able to reach another chat. */
describe('cronjobs written by the AI', () => {
  let fake: Fake;
  beforeAll(async () => {
    fake = await startFakeProviders();
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await fake.close();
    fake.restoreEnv();
  });

  const boot = (options: TestAppOptions = {}) =>
    bootInBerlin(week.mondayAt('07:00'), options);
  const jobs = async (owner: TestAgent): Promise<CronJobView[]> =>
    (await owner.get('/api/cronjobs').expect(200)).body;
  const newChat = async (owner: TestAgent): Promise<ChatSummary> =>
    (await owner.post('/api/chats').send({ title: 'Private' }).expect(201))
      .body;
  const runsOf =
    (owner: TestAgent, id: string) => async (): Promise<CronRunView[]> =>
      (
        await owner
          .get(`/api/cronjobs/${encodeURIComponent(id)}/runs`)
          .expect(200)
      ).body;

  /** One owner turn in which the model makes these tool calls; their parsed results, in order. */
  async function aiCalls(
    client: ChatClient,
    chatId: string,
    calls: ToolCall[],
  ): Promise<Array<Record<string, unknown>>> {
    fake.openai.enqueue(
      { toolCalls: calls.map((call, i) => ({ id: `call_${i}`, ...call })) },
      { text: ['ok'] },
    );
    const events = await client.send(chatId, 'go');
    return (eventsNamed(events, 'tool_result') as { result: string }[]).map(
      (r) => JSON.parse(r.result),
    );
  }
  const db = (args: Record<string, unknown>): ToolCall => ({
    name: 'db_query',
    arguments: { collection: 'cronjobs', ...args },
  });
  const job = (fields: Record<string, unknown> = {}) => ({
    name: 'Plants',
    instruction: 'Remind me to water the plants.',
    cronExpression: '0 9 * * *',
    ...fields,
  });

  describe('db_query writes', () => {
    let t: TestApp;
    let owner: TestAgent;
    let client: ChatClient;
    beforeAll(async () => {
      ({ t, owner } = await boot());
      client = await chatClient(t);
    });
    afterAll(() => t.close());

    it('refuses the fields the app owns and bad values, and gives an inserted job its own new chat', async () => {
      const secret = await newChat(owner);
      const chat = await newChat(owner);
      const results = await aiCalls(client, chat.id, [
        db({
          operation: 'insertOne',
          data: job({ chatId: { $oid: secret.id } }),
        }),
        db({ operation: 'insertOne', data: job({ _id: 'my-job' }) }),
        db({ operation: 'insertOne', data: job({ _id: 7 }) }),
        db({ operation: 'insertOne', data: job({ lastRun: null }) }),
        db({ operation: 'insertOne', data: job({ consecutiveFailures: -5 }) }),
        db({ operation: 'insertOne', data: job({ createdBy: 'owner' }) }),
        db({ operation: 'insertOne', data: job({ colour: 'red' }) }),
        db({ operation: 'insertOne', data: job({ name: 42 }) }),
        db({ operation: 'insertOne', data: job({ enabled: 'yes' }) }),
        db({
          operation: 'insertOne',
          data: job({ cronExpression: '*/10 * * * * *' }),
        }),
        db({ operation: 'insertOne', data: { name: 'Half' } }),
        db({
          operation: 'insertMany',
          data: [job(), job({ chatId: { $oid: secret.id } })],
        }),
        db({
          operation: 'insertOne',
          data: {
            name: 'Plants',
            instruction: 'Remind me to water the plants.',
            cron_expression: '0 9 * * *',
          },
        }),
      ]);
      expect(results[0].error).toContain(`'data.chatId' ${OWNED}`);
      expect(results[1].error).toContain(`'data._id' ${OWNED}`);
      expect(results[2].error).toContain(`'data._id' ${OWNED}`);
      expect(results[3].error).toContain(`'data.lastRun' ${OWNED}`);
      expect(results[4].error).toContain(`'data.consecutiveFailures' ${OWNED}`);
      expect(results[5].error).toContain(`'data.createdBy' ${OWNED}`);
      expect(results[6].error).toContain('is not a field of a scheduled job');
      expect(results[7].error).toContain('name must be a non-empty text');
      expect(results[8].error).toContain('enabled must be true or false');
      expect(results[9].error).toContain('more often than once a minute');
      expect(results[10].error).toContain('instruction is required');
      expect(results[11].error).toContain(`'data[1].chatId' ${OWNED}`);
      expect(Object.keys(results[12])).toEqual(['insertedId']);

      const list = await jobs(owner);
      expect(list).toHaveLength(1);
      const [made] = list;
      expect(made).toMatchObject({
        id: results[12].insertedId,
        name: 'Plants',
        createdBy: 'ai',
        scheduleError: null,
        nextRuns: [
          week.at(0, '09:00'),
          week.at(1, '09:00'),
          week.at(2, '09:00'),
        ],
      });
      expect(made.chatId).not.toBeNull();
      expect(made.chatId).not.toBe(secret.id);
      expect(made.chatId).not.toBe(chat.id);
      const chats: ChatSummary[] = (await owner.get('/api/chats').expect(200))
        .body;
      expect(chats.find((c) => c.id === made.chatId)).toMatchObject({
        title: 'Job: Plants',
        kind: 'cron',
      });
    });

    it('updates only name, instruction, expression and enabled, with the same checks', async () => {
      const chat = await newChat(owner);
      const [before] = await jobs(owner);
      const byId = { _id: { $oid: before.id } };
      const results = await aiCalls(client, chat.id, [
        db({
          operation: 'updateOne',
          filter: byId,
          update: { $set: { chatId: { $oid: chat.id } } },
        }),
        db({
          operation: 'updateOne',
          filter: byId,
          update: { $set: { lastRun: { outcome: 'success' } } },
        }),
        db({
          operation: 'updateMany',
          filter: {},
          update: { $inc: { consecutiveFailures: 10 } },
        }),
        db({
          operation: 'updateOne',
          filter: byId,
          update: [{ $set: { chatId: '$name' } }],
        }),
        db({
          operation: 'updateOne',
          filter: { name: 'Nobody' },
          update: { $set: { name: 'Ghost' } },
          options: { upsert: true },
        }),
        db({
          operation: 'updateOne',
          filter: byId,
          update: { $set: { cronExpression: 'whenever' } },
        }),
        db({
          operation: 'updateOne',
          filter: byId,
          update: { $set: { name: 'Water', cron_expression: '30 9 * * *' } },
        }),
        db({
          operation: 'updateMany',
          filter: { name: 'Nobody' },
          update: { $set: { enabled: false } },
        }),
      ]);
      expect(results[0].error).toContain(`'update.$set.chatId' ${OWNED}`);
      expect(results[1].error).toContain(`'update.$set.lastRun' ${OWNED}`);
      expect(results[2].error).toContain(
        "'$inc' is not available on 'cronjobs'",
      );
      expect(results[3].error).toContain('Update pipelines are not available');
      expect(results[4].error).toContain('upsert is not available');
      expect(results[5].error).toContain('Invalid cron expression');
      expect(results[6]).toEqual({ matchedCount: 1, modifiedCount: 1 });
      expect(results[7]).toEqual({ matchedCount: 0, modifiedCount: 0 });

      const [after] = await jobs(owner);
      expect(after).toMatchObject({
        id: before.id,
        name: 'Water',
        cronExpression: '30 9 * * *',
        chatId: before.chatId,
        consecutiveFailures: 0,
        lastRun: null,
        enabled: true,
      });
      const chats: ChatSummary[] = (await owner.get('/api/chats').expect(200))
        .body;
      expect(chats.find((c) => c.id === after.chatId)?.title).toBe(
        'Job: Water',
      );
    });

    it('deletes a job with its own chat only, whatever the filter names', async () => {
      const chat = await newChat(owner);
      const [existing] = await jobs(owner);
      const results = await aiCalls(client, chat.id, [
        db({ operation: 'deleteMany', filter: { chatId: { $oid: chat.id } } }),
        db({ operation: 'deleteOne', filter: { _id: { $oid: existing.id } } }),
      ]);
      // The first db_query of the new chat switches it to the data mode (said in its result).
      expect(results).toEqual([
        { deletedCount: 0, modeSwitch: expect.any(String) },
        { deletedCount: 1 },
      ]);
      expect(await jobs(owner)).toEqual([]);
      await owner.get(`/api/chats/${existing.chatId}/messages`).expect(404);
      await owner.get(`/api/chats/${chat.id}/messages`).expect(200);
    });

    it('refuses a unique, partial or TTL index on cronjobs, so the owner can still create jobs', async () => {
      const chat = await newChat(owner);
      const results = await aiCalls(client, chat.id, [
        db({
          operation: 'createIndex',
          keys: { name: 1 },
          options: { unique: true },
        }),
        db({
          operation: 'createIndex',
          keys: { instruction: 1 },
          options: { unique: true, partialFilterExpression: { enabled: true } },
        }),
        db({
          operation: 'createIndex',
          keys: { createdAt: 1 },
          options: { expireAfterSeconds: 1 },
        }),
        db({ operation: 'createIndex', keys: { name: 1 } }),
      ]);
      for (const result of results.slice(0, 3))
        expect(result.error).toContain('the app also writes this collection');
      expect(results[3]).toEqual({ success: true });
      const body = {
        name: 'Same',
        instruction: 'Same.',
        cronExpression: '0 10 * * *',
      };
      const first = (await owner.post('/api/cronjobs').send(body).expect(201))
        .body as CronJobView;
      await owner.post('/api/cronjobs').send(body).expect(201);
      expect(first.createdBy).toBe('owner');
      for (const made of await jobs(owner))
        await owner.delete(`/api/cronjobs/${made.id}`).expect(204);
    });
  });

  it('lists a malformed stored job with a scheduleError, deletes it by its id, and keeps running the others', async () => {
    const { t, owner } = await boot();
    try {
      const good = (
        await owner
          .post('/api/cronjobs')
          .send({
            name: 'Good',
            instruction: 'Good run.',
            cronExpression: '0 8 * * *',
          })
          .expect(201)
      ).body as CronJobView;
      const privateChat = await newChat(owner);
      const jobsCollection = t.app
        .get<Connection>(getConnectionToken())
        .collection('cronjobs');
      const wrongTypes = new Types.ObjectId();
      const foreign = new Types.ObjectId();
      // As db_query could store them before its writes were checked.
      await jobsCollection.insertMany([
        {
          _id: 'legacy-job' as never,
          name: 'S',
          instruction: 'i',
          cronExpression: '0 8 * * *',
        },
        {
          _id: 42 as never,
          name: 'N',
          instruction: 'i',
          cronExpression: '0 8 * * *',
        },
        {
          _id: { kind: 'job', n: 1 } as never,
          name: 'Object id',
          instruction: 'i',
          cronExpression: '0 8 * * *',
        },
        {
          _id: wrongTypes,
          name: 7,
          instruction: ['x'],
          cronExpression: 5,
          enabled: 'yes',
          lastRun: 'bad',
          consecutiveFailures: 'many',
          createdAt: 'yesterday',
        },
        {
          _id: foreign,
          name: 'Foreign',
          instruction: 'Foreign run.',
          cronExpression: '0 8 * * *',
          enabled: true,
          chatId: new Types.ObjectId(privateChat.id),
        },
      ]);
      await t.app.get(CronScheduler).reload();

      const list = await jobs(owner);
      expect(list.map((j) => j.id)).toEqual(
        expect.arrayContaining([
          good.id,
          'legacy-job',
          '42',
          wrongTypes.toHexString(),
        ]),
      );
      const objectId = list.find((j) => j.name === 'Object id')?.id as string;
      expect(objectId).toMatch(/^ejson:/);
      for (const id of [
        'legacy-job',
        '42',
        objectId,
        wrongTypes.toHexString(),
      ]) {
        const view = list.find((j) => j.id === id) as CronJobView;
        expect(view.scheduleError).toContain(MALFORMED);
        expect(view.nextRuns).toEqual([]);
        expect(view.lastRun).toBeNull();
      }
      expect(list.find((j) => j.id === good.id)?.nextRuns[0]).toBe(
        week.at(0, '08:00'),
      );
      await owner.post('/api/cronjobs/legacy-job/run').expect(400);
      for (const id of ['legacy-job', '42']) {
        expect(
          (await owner.get(`/api/cronjobs/${id}/runs`).expect(200)).body,
        ).toEqual([]);
        expect(
          (await owner.get(`/api/cronjobs/${id}`).expect(200)).body.id,
        ).toBe(id);
      }
      await owner
        .patch(`/api/cronjobs/${wrongTypes.toHexString()}`)
        .send({ name: 'Fixed name' })
        .expect(200);

      fake.openai.fallback = { text: ['ran'] };
      await tickAt(t, week.at(0, '08:00:00.100'));
      const [goodRun] = await settledRuns(runsOf(owner, good.id));
      expect(goodRun.outcome).toBe('success');
      // A chatId that names the owner's chat is not the job's: the run gets a chat of its own.
      const [foreignRun] = await settledRuns(
        runsOf(owner, foreign.toHexString()),
      );
      expect(foreignRun.chatId).not.toBe(privateChat.id);
      expect(
        (await owner.get(`/api/chats/${privateChat.id}/messages`).expect(200))
          .body,
      ).toEqual([]);
      expect(fake.openai.requests).toHaveLength(2);

      for (const id of ['legacy-job', '42', objectId, wrongTypes.toHexString()])
        await owner
          .delete(`/api/cronjobs/${encodeURIComponent(id)}`)
          .expect(204);
      await jobsCollection.updateOne(
        { _id: foreign },
        { $set: { chatId: new Types.ObjectId(privateChat.id) } },
      );
      await owner.delete(`/api/cronjobs/${foreign.toHexString()}`).expect(204);
      await owner.get(`/api/chats/${privateChat.id}/messages`).expect(200);
      expect((await jobs(owner)).map((j) => j.id)).toEqual([good.id]);
    } finally {
      await t.close();
    }
  });

  it('drops at start a unique, partial or TTL index an earlier version let the AI make on cronjobs', async () => {
    const database = keptDatabase();
    let { t, owner } = await boot({ database });
    const collection = () =>
      t.app.get<Connection>(getConnectionToken()).collection('cronjobs');
    await collection().createIndex(
      { name: 1 },
      { unique: true, name: 'ai_unique_name' },
    );
    await collection().createIndex({ instruction: 1 }, { name: 'ai_plain' });
    await t.close();
    ({ t, owner } = await boot({ database }));
    try {
      const names = (await collection().indexes()).map((i) => i.name);
      expect(names).toContain('ai_plain');
      expect(names).not.toContain('ai_unique_name');
      const body = {
        name: 'Twin',
        instruction: 'x',
        cronExpression: '0 8 * * *',
      };
      await owner.post('/api/cronjobs').send(body).expect(201);
      await owner.post('/api/cronjobs').send(body).expect(201);
    } finally {
      await t.app.get<Connection>(getConnectionToken()).dropDatabase();
      await t.close();
    }
  });

  it('stops at MAX_CRONJOBS for the owner, manage_cronjob and db_query alike', async () => {
    const { t, owner } = await boot({ env: { MAX_CRONJOBS: '2' } });
    try {
      const client = await chatClient(t);
      const body = (name: string) => ({
        name,
        instruction: 'x',
        cronExpression: '0 8 * * *',
      });
      await owner.post('/api/cronjobs').send(body('One')).expect(201);
      const chat = await newChat(owner);
      const results = await aiCalls(client, chat.id, [
        db({ operation: 'insertMany', data: [job(), job()] }),
        db({ operation: 'insertOne', data: job() }),
        db({ operation: 'insertOne', data: job() }),
        {
          name: 'manage_cronjob',
          arguments: {
            action: 'create',
            name: 'Three',
            instruction: 'x',
            cron_expression: '0 8 * * *',
          },
        },
      ]);
      expect(results[0].error).toContain('At most 2 scheduled jobs');
      expect(Object.keys(results[1])).toEqual(['insertedId']);
      expect(results[2].error).toContain('At most 2 scheduled jobs');
      expect(results[3].error).toContain('MAX_CRONJOBS');
      const refused = await owner
        .post('/api/cronjobs')
        .send(body('Four'))
        .expect(400);
      expect(refused.body.message).toContain('At most 2 scheduled jobs');
      expect(await jobs(owner)).toHaveLength(2);
    } finally {
      await t.close();
    }
  });

  it('lets an unattended run create at most one job, while the owner chat may create more', async () => {
    const { t, owner } = await boot();
    try {
      const client = await chatClient(t);
      const runner = (
        await owner
          .post('/api/cronjobs')
          .send({
            name: 'Runner',
            instruction: 'Make jobs.',
            cronExpression: '0 8 * * *',
          })
          .expect(201)
      ).body as CronJobView;
      const create = (name: string): ToolCall => ({
        name: 'manage_cronjob',
        arguments: {
          action: 'create',
          name,
          instruction: 'x',
          cron_expression: '0 12 * * *',
        },
      });
      fake.openai.enqueue(
        {
          toolCalls: [
            { id: 'a', ...create('First') },
            { id: 'b', ...create('Second') },
            {
              id: 'c',
              ...db({ operation: 'insertOne', data: job({ name: 'Third' }) }),
            },
          ],
        },
        { text: ['done'] },
      );
      await owner.post(`/api/cronjobs/${runner.id}/run`).expect(202);
      await settledRuns(runsOf(owner, runner.id));
      const toolMessages = JSON.stringify(
        fake.openai.requests.at(-1)?.body.messages,
      );
      expect(
        toolMessages.match(/may create at most 1 scheduled job/g),
      ).toHaveLength(2);
      const names = (await jobs(owner)).map((j) => [j.name, j.createdBy]);
      expect(names).toEqual([
        ['Runner', 'owner'],
        ['First', 'ai'],
      ]);

      const chat = await newChat(owner);
      const results = await aiCalls(client, chat.id, [
        create('Owner asked A'),
        create('Owner asked B'),
      ]);
      expect(results.map((r) => r.name)).toEqual([
        'Owner asked A',
        'Owner asked B',
      ]);
    } finally {
      await t.close();
    }
  });
});

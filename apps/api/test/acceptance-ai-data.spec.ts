import type { CronJobView } from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import { Types, type Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import { ManageCronjobTool } from '../src/automations/jobs/manage-cronjob.tool';
import type { TurnSource } from '../src/llm/turn-source';
import {
  MongoSandboxService,
  type SandboxCaller,
} from '../src/mongo-sandbox/mongo-sandbox.service';
import { createTestApp, type TestApp } from './support/test-app';

const JOB = {
  name: 'Morning',
  instruction: 'Say good morning',
  cronExpression: '0 8 * * *',
};
const HEX = '65a1b2c3d4e5f60718293a4b';

/**
 * Issue 19 D and E from outside: the AI's db_query writes to `cronjobs` in
 * every spelling the driver accepts, the job limits through all three create
 * paths at once, and whatsapp_messages through stages the issue does not list.
 */
describe('acceptance: the AI and cronjobs (issue 19 D)', () => {
  let t: TestApp;
  let owner: TestAgent;
  let sandbox: MongoSandboxService;
  let tool: ManageCronjobTool;
  const db = () => t.app.get<Connection>(getConnectionToken());
  const jobs = async (): Promise<CronJobView[]> =>
    (await owner.get('/api/cronjobs').expect(200)).body;
  const state = async () =>
    JSON.stringify({
      jobs: await db()
        .collection('cronjobs')
        .find({})
        .sort({ _id: 1 })
        .toArray(),
      chats: await db().collection('chats').find({}).sort({ _id: 1 }).toArray(),
      indexes: await db()
        .collection('cronjobs')
        .indexes()
        .catch(() => []),
    });
  const caller = (
    source: TurnSource,
    messageId: string | null,
    chatId: string | null = null,
  ): SandboxCaller => ({
    source,
    chatId,
    messageId,
  });
  const cronjobs = (
    op: Record<string, unknown>,
    by: SandboxCaller = caller('chat', 'owner-turn'),
  ) => sandbox.execute({ collection: 'cronjobs', ...op }, by);
  /** manage_cronjob create as a turn of this caller; the parsed result, or `{ error }` when it throws. */
  const toolCreate = async (by: SandboxCaller, name: string) => {
    try {
      return JSON.parse(
        await tool.execute(
          {
            action: 'create',
            name,
            instruction: 'x',
            cron_expression: '0 9 * * *',
          },
          {
            ...by,
            settings: {} as never,
            signal: new AbortController().signal,
          },
        ),
      ) as Record<string, unknown>;
    } catch (error) {
      return { error: (error as Error).message };
    }
  };

  beforeAll(async () => {
    t = await createTestApp({ env: { MAX_CRONJOBS: '6' } });
    owner = await t.owner();
    sandbox = t.app.get(MongoSandboxService);
    tool = t.app.get(ManageCronjobTool);
  });
  afterAll(() => t.close());
  afterEach(async () => {
    for (const job of await jobs())
      await owner.delete(`/api/cronjobs/${encodeURIComponent(job.id)}`);
    await db().collection('cronjobs').deleteMany({});
  });

  it('refuses every way of writing the fields the app owns, or writing raw, and changes nothing', async () => {
    await owner.post('/api/cronjobs').send(JOB).expect(201);
    const before = await state();
    const insertVariants: Array<Record<string, unknown>> = [
      { chatId: HEX },
      { chatId: { $oid: HEX } },
      { _id: 'mine' },
      { _id: { $oid: HEX } },
      { _id: { a: 1 } },
      { _id: 7 },
      { lastRun: { outcome: 'success', startedAt: '2025-01-01T00:00:00Z' } },
      { lastDueAt: { $date: '2000-01-01T00:00:00Z' } },
      { consecutiveFailures: -100 },
      { createdBy: 'owner' },
      { createdAt: { $date: '2000-01-01T00:00:00Z' } },
      { updatedAt: '2000-01-01' },
      { chat_id: HEX },
      { 'chatId.x': 1 },
      { 'lastRun.outcome': 'success' },
      { enabled: 'yes' },
      { cronExpression: '* * * * * *' },
      { cronExpression: '* * * * *', cron_expression: '0 8 * * *' },
      { name: '' },
      { instruction: { $gt: '' } },
    ];
    const problems: string[] = [];
    for (const extra of insertVariants) {
      const result = await cronjobs({
        operation: 'insertOne',
        data: { ...JOB, ...extra },
      });
      if (!('error' in result))
        problems.push(
          `insertOne ${JSON.stringify(extra)}: ${JSON.stringify(result)}`,
        );
    }
    const updateVariants: Array<Record<string, unknown>> = [
      { update: { $set: { chatId: HEX } } },
      { update: { $set: { chatId: { $oid: HEX } } } },
      { update: { $set: { 'lastRun.outcome': 'success' } } },
      { update: { $set: { consecutiveFailures: 0 } } },
      { update: { $set: { createdBy: 'owner' } } },
      { update: { $set: { name: 'ok' }, $unset: { chatId: '' } } },
      { update: { $unset: { chatId: '' } } },
      { update: { $rename: { name: 'chatId' } } },
      { update: { $inc: { consecutiveFailures: -5 } } },
      { update: { $currentDate: { updatedAt: true } } },
      { update: { $min: { lastDueAt: { $date: '2000-01-01T00:00:00Z' } } } },
      { update: { $push: { tags: 'x' } } },
      {
        update: { $setOnInsert: { chatId: HEX }, $set: { name: 'x' } },
        options: { upsert: true },
      },
      {
        update: { $set: { name: 'Upserted' } },
        options: { upsert: true },
        filter: { name: 'none' },
      },
      {
        update: {
          name: 'Replaced',
          instruction: 'x',
          cronExpression: '0 8 * * *',
        },
      },
      { update: [{ $set: { chatId: HEX } }] },
      { update: [{ $set: { name: 'Via pipeline' } }] },
      { update: { $set: {} } },
      { update: { $set: { cronExpression: 'not a cron' } } },
      { update: { $set: { enabled: 1 } } },
    ];
    for (const op of ['updateOne', 'updateMany'])
      for (const variant of updateVariants) {
        const result = await cronjobs({
          operation: op,
          filter: {},
          ...variant,
        });
        if (!('error' in result))
          problems.push(
            `${op} ${JSON.stringify(variant)}: ${JSON.stringify(result)}`,
          );
      }
    // One bad document stops the whole insertMany, wherever it is.
    for (const docs of [
      [JOB, { ...JOB, chatId: HEX }],
      [{ ...JOB, _id: 'x' }, JOB],
      [JOB, JOB, { ...JOB, cronExpression: 'nope' }],
    ]) {
      const result = await cronjobs({ operation: 'insertMany', data: docs });
      if (!('error' in result))
        problems.push(`insertMany: ${JSON.stringify(result)}`);
    }
    expect(problems).toEqual([]);
    expect(await state()).toBe(before);
  });

  it('lets the AI create only plain indexes on cronjobs, and no capped or special collection of that name', async () => {
    await owner.post('/api/cronjobs').send(JOB).expect(201);
    const before = await state();
    const problems: string[] = [];
    for (const [keys, options] of [
      [{ name: 1 }, { unique: true }],
      [{ name: 1 }, { unique: 1 }],
      [{ name: 1 }, { unique: 'true' }],
      [{ name: 1 }, { Unique: true }],
      [{ name: 1 }, { sparse: true, unique: true }],
      [{ name: 1 }, { partialFilterExpression: { enabled: true } }],
      [{ createdAt: 1 }, { expireAfterSeconds: 0 }],
      [{ createdAt: 1 }, { expireAfterSeconds: '1' }],
      [{ name: 1 }, { collation: { locale: 'en', strength: 2 }, unique: true }],
      [{ name: 1 }, { hidden: true }],
      [{ name: 1 }, { background: true, unique: true }],
      [{ $_id: 1 }, {}],
      [
        { name: 1, instruction: 1 },
        { unique: true, name: 'plain' },
      ],
    ] as const) {
      const result = await cronjobs({
        operation: 'createIndex',
        keys,
        options,
      });
      if (!('error' in result))
        problems.push(
          `createIndex ${JSON.stringify(options)}: ${JSON.stringify(result)}`,
        );
    }
    for (const options of [
      { capped: true, size: 4096 },
      { capped: true, size: 4096, max: 1 },
      { size: 4096 },
      { validator: { name: { $type: 'number' } } },
      { timeseries: { timeField: 'createdAt' } },
    ]) {
      const result = await cronjobs({ operation: 'createCollection', options });
      if (!('error' in result))
        problems.push(
          `createCollection ${JSON.stringify(options)}: ${JSON.stringify(result)}`,
        );
    }
    expect(problems).toEqual([]);
    expect(await state()).toBe(before);
    // A plain index is fine, and the owner can still create jobs with the same name.
    expect(
      await cronjobs({
        operation: 'createIndex',
        keys: { name: 1 },
        options: { name: 'by_name' },
      }),
    ).toEqual({
      success: true,
    });
    await owner.post('/api/cronjobs').send(JOB).expect(201);
  });

  it('deleting jobs by any filter never deletes a chat another job or the owner uses', async () => {
    const mine = (
      await owner.post('/api/chats').send({ title: 'Private' }).expect(201)
    ).body;
    await owner
      .post(`/api/chats/${mine.id}/messages`)
      .send({ content: 'secret plans' });
    const ownerJob = (await owner.post('/api/cronjobs').send(JOB).expect(201))
      .body as CronJobView;
    // Jobs stored before these checks existed, pointing at the owner's chat and at another job's chat.
    await db()
      .collection('cronjobs')
      .insertMany([
        { ...JOB, name: 'Squatter', chatId: new Types.ObjectId(mine.id) },
        {
          ...JOB,
          name: 'Twin',
          chatId: new Types.ObjectId(ownerJob.chatId as string),
        },
        { _id: 'legacy' as never, ...JOB, name: 'Legacy', chatId: mine.id },
      ]);
    const chatsBefore = (await owner.get('/api/chats').expect(200)).body.length;
    for (const filter of [
      { name: 'Squatter' },
      { name: 'Twin', chatId: { $oid: ownerJob.chatId } },
      { _id: 'legacy' },
    ])
      expect(await cronjobs({ operation: 'deleteMany', filter })).toEqual({
        deletedCount: 1,
      });
    expect((await owner.get('/api/chats').expect(200)).body.length).toBe(
      chatsBefore,
    );
    await owner.get(`/api/chats/${mine.id}/messages`).expect(200);
    expect((await jobs()).map((j) => j.name)).toEqual(['Morning']);
  });

  it('every malformed job an earlier version let the AI store is listed with a scheduleError and deletable by its id', async () => {
    const good = (await owner.post('/api/cronjobs').send(JOB).expect(201))
      .body as CronJobView;
    const malformed: Array<Record<string, unknown>> = [
      { _id: '' },
      { _id: 'x'.repeat(300) },
      { _id: 'ejson:{"$oid":"65a1b2c3d4e5f60718293a4b"}' },
      { _id: 'a/b?c#d' },
      // Strings that read like another id type: the good job's hex, a number.
      { _id: good.id },
      { _id: '42' },
      { _id: 42 },
      { _id: ' padded ' },
      { _id: 1e21 },
      { _id: 1.5 },
      { _id: -7 },
      { _id: Number.NaN },
      { _id: Number.POSITIVE_INFINITY },
      { _id: true },
      { _id: new Date(0) },
      { _id: { nested: { deep: 'x'.repeat(300) } } },
      { _id: new Types.ObjectId(), name: 5, cronExpression: { a: 1 } },
      { _id: new Types.ObjectId(), enabled: 'yes', chatId: 'not-an-id' },
    ];
    const stored: Array<Record<string, unknown>> = [];
    for (const doc of malformed) {
      try {
        await db()
          .collection('cronjobs')
          .insertOne({ ...JOB, ...doc } as never);
        stored.push(doc);
      } catch {
        // The database refuses this _id itself: nothing to clean up.
      }
    }
    expect(stored.length).toBeGreaterThanOrEqual(10);
    const listed = await jobs();
    expect(listed).toHaveLength(stored.length + 1);
    const broken = listed.filter((j) => j.id !== good.id);
    expect(
      broken
        .filter(
          (j) => !/Delete it and create it again/.test(String(j.scheduleError)),
        )
        .map((j) => j.id),
    ).toEqual([]);
    expect(
      listed.find((j) => j.id === good.id)?.nextRuns.length,
    ).toBeGreaterThan(0);
    expect(new Set(listed.map((j) => j.id)).size).toBe(listed.length);
    const undeletable: string[] = [];
    for (const job of broken) {
      await owner
        .post(`/api/cronjobs/${encodeURIComponent(job.id)}/run`)
        .expect((res) => expect([400, 404]).toContain(res.status));
      const res = await owner.delete(
        `/api/cronjobs/${encodeURIComponent(job.id)}`,
      );
      if (res.status !== 204)
        undeletable.push(`${JSON.stringify(job.id)}: ${res.status}`);
    }
    expect(undeletable).toEqual([]);
    expect((await jobs()).map((j) => j.id)).toEqual([good.id]);
  });

  it('MAX_CRONJOBS holds with REST, manage_cronjob and db_query creating in parallel', async () => {
    await owner.post('/api/cronjobs').send(JOB).expect(201);
    const attempts = await Promise.all([
      ...[1, 2, 3, 4].map((i) =>
        owner
          .post('/api/cronjobs')
          .send({ ...JOB, name: `REST ${i}` })
          .then((res) =>
            res.status === 201
              ? { ok: true }
              : { error: String(res.body.message) },
          ),
      ),
      ...[1, 2, 3, 4].map((i) =>
        toolCreate(caller('chat', `tool-turn-${i}`), `Tool ${i}`),
      ),
      ...[1, 2, 3, 4].map((i) =>
        cronjobs(
          { operation: 'insertOne', data: { ...JOB, name: `Query ${i}` } },
          caller('chat', `query-turn-${i}`),
        ),
      ),
      cronjobs(
        { operation: 'insertMany', data: [JOB, JOB] },
        caller('chat', 'many'),
      ),
    ]);
    const refused = attempts.filter((a) => 'error' in a) as Array<{
      error: string;
    }>;
    expect(await jobs()).toHaveLength(6);
    expect(await db().collection('cronjobs').countDocuments()).toBe(6);
    expect(refused.length).toBe(
      attempts.length -
        5 +
        (attempts.some((a) => 'insertedCount' in a) ? 1 : 0),
    );
    for (const r of refused) expect(r.error).toMatch(/MAX_CRONJOBS/);
    // Every created job has its own chat.
    const chatIds = (await jobs()).map((j) => j.chatId);
    expect(new Set(chatIds).size).toBe(6);
  });

  it.each(['cron', 'pulse', 'auto-reply'] as const)(
    'an unattended %s run creates at most one job, even with parallel calls through both tools',
    async (source) => {
      const run = caller(source, `run-${source}`, null);
      const attempts = await Promise.all([
        toolCreate(run, 'A'),
        cronjobs({ operation: 'insertOne', data: { ...JOB, name: 'B' } }, run),
        cronjobs(
          { operation: 'insertMany', data: [{ ...JOB, name: 'C' }] },
          run,
        ),
        toolCreate(run, 'D'),
      ]);
      expect(attempts.filter((a) => !('error' in a))).toHaveLength(1);
      expect(await jobs()).toHaveLength(1);
      expect((await jobs())[0].createdBy).toBe('ai');
      // A run without a message id is still one run (its chat).
      const chatRun = caller(source, null, HEX);
      const more = await Promise.all([
        toolCreate(chatRun, 'E'),
        cronjobs(
          { operation: 'insertOne', data: { ...JOB, name: 'F' } },
          chatRun,
        ),
      ]);
      expect(more.filter((a) => !('error' in a))).toHaveLength(1);
      // The owner's chat turns are not limited.
      const chat = caller('chat', 'owner-chat-turn');
      await toolCreate(chat, 'G');
      await toolCreate(chat, 'H');
      expect(await jobs()).toHaveLength(4);
    },
  );
});

const READABLE = '4915550000011';
const HIDDEN = '4915550000012';
const SECRET = 'hidden-contact-secret-words';

describe('acceptance: whatsapp_messages through db_query (issue 19 E)', () => {
  let t: TestApp;
  let owner: TestAgent;
  let sandbox: MongoSandboxService;
  const query = (op: Record<string, unknown>) =>
    sandbox.execute(op, { source: 'chat', chatId: null, messageId: null });

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.owner();
    sandbox = t.app.get(MongoSandboxService);
    for (const [phoneNumber, canRead] of [
      [READABLE, true],
      [HIDDEN, false],
    ] as const)
      await owner
        .post('/api/whatsapp/permissions')
        .send({
          phoneNumber,
          displayName: `C ${phoneNumber}`,
          canRead,
          canReply: true,
        })
        .expect(200);
    await t.app
      .get<Connection>(getConnectionToken())
      .collection('whatsapp_messages')
      .insertMany(
        [READABLE, HIDDEN].map((phone, i) => ({
          _id: `M${i}` as never,
          from: `${phone}@s.whatsapp.net`,
          fromName: null,
          to: 'me@s.whatsapp.net',
          body: phone === HIDDEN ? SECRET : 'visible words',
          timestamp: 1_700_000_000_000 + i,
          fromMe: false,
          isGroup: false,
          phone,
          receivedAt: new Date(1_700_000_000_000 + i),
          processing: 'done',
        })),
      );
  });
  afterAll(() => t.close());

  it('no operation, filter or stage the issue does not list reveals a hidden contact', async () => {
    const W = 'whatsapp_messages';
    const variants: Array<Record<string, unknown>> = [
      {
        operation: 'find',
        collection: W,
        filter: { $or: [{ phone: HIDDEN }, { phone: { $exists: true } }] },
      },
      {
        operation: 'find',
        collection: W,
        filter: { $nor: [{ phone: READABLE }] },
      },
      { operation: 'find', collection: W, filter: { _id: 'M1' } },
      {
        operation: 'find',
        collection: W,
        filter: { $expr: { $eq: ['$phone', HIDDEN] } },
      },
      { operation: 'findOne', collection: W, filter: { body: SECRET } },
      {
        operation: 'findOne',
        collection: W,
        filter: {},
        options: { sort: { phone: -1 } },
      },
      {
        operation: 'countDocuments',
        collection: W,
        filter: { body: { $regex: '^hidden' } },
      },
      {
        operation: 'countDocuments',
        collection: W,
        filter: { $expr: { $gt: [{ $strLenCP: '$body' }, 0] } },
      },
      {
        operation: 'countDocuments',
        collection: W,
        filter: { $where: 'true' },
      },
      {
        operation: 'aggregate',
        collection: W,
        pipeline: [{ $match: { phone: HIDDEN } }],
      },
      {
        operation: 'aggregate',
        collection: W,
        pipeline: [{ $group: { _id: '$phone', n: { $sum: 1 } } }],
      },
      {
        operation: 'aggregate',
        collection: W,
        pipeline: [{ $sortByCount: '$body' }],
      },
      {
        operation: 'aggregate',
        collection: W,
        pipeline: [{ $documents: [{ phone: HIDDEN }] }],
      },
      {
        operation: 'aggregate',
        collection: 'chats',
        pipeline: [{ $unionWith: W }],
      },
      {
        operation: 'aggregate',
        collection: 'chats',
        pipeline: [
          {
            $unionWith: { coll: W, pipeline: [{ $match: { phone: HIDDEN } }] },
          },
        ],
      },
      {
        operation: 'aggregate',
        collection: 'whatsapp_permissions',
        pipeline: [
          {
            $lookup: {
              from: 'chats',
              let: { p: '$phoneNumber' },
              pipeline: [{ $facet: { m: [{ $unionWith: W }] } }],
              as: 'x',
            },
          },
        ],
      },
      {
        operation: 'aggregate',
        collection: 'whatsapp_permissions',
        pipeline: [
          {
            $lookup: {
              from: W,
              localField: 'phoneNumber',
              foreignField: 'phone',
              as: 'm',
            },
          },
        ],
      },
      {
        operation: 'aggregate',
        collection: 'whatsapp_permissions',
        pipeline: [
          {
            $graphLookup: {
              from: W,
              startWith: '$phoneNumber',
              connectFromField: 'phone',
              connectToField: 'phone',
              as: 'm',
            },
          },
        ],
      },
      {
        operation: 'aggregate',
        collection: W,
        pipeline: [{ $out: 'ai_copy' }],
      },
      {
        operation: 'aggregate',
        collection: W,
        pipeline: [{ $merge: { into: 'ai_copy' } }],
      },
      {
        operation: 'aggregate',
        collection: 'ai_notes',
        pipeline: [{ $merge: { into: W } }],
      },
      {
        operation: 'insertOne',
        collection: W,
        data: { phone: HIDDEN, body: 'planted' },
      },
      {
        operation: 'updateMany',
        collection: W,
        filter: {},
        update: { $set: { phone: READABLE } },
      },
      { operation: 'deleteMany', collection: W, filter: { phone: HIDDEN } },
      { operation: 'createIndex', collection: W, keys: { phone: 1 } },
    ];
    const leaks: string[] = [];
    for (const op of variants) {
      const result = await query(op);
      const text = JSON.stringify(result);
      if (
        text.includes(SECRET) ||
        text.includes(HIDDEN) ||
        ('count' in result &&
          op['filter'] &&
          JSON.stringify(op['filter']).includes('hidden') &&
          result['count'] !== 0)
      )
        leaks.push(`${JSON.stringify(op)} -> ${text.slice(0, 200)}`);
    }
    expect(leaks).toEqual([]);
    // The counts see the readable contact only.
    expect(
      await query({ operation: 'countDocuments', collection: W, filter: {} }),
    ).toEqual({ count: 1 });
    // Nothing was changed by the refused writes.
    expect(
      await t.app
        .get<Connection>(getConnectionToken())
        .collection(W)
        .countDocuments({ phone: HIDDEN }),
    ).toBe(1);
    expect(await query({ operation: 'listCollections' })).toEqual({
      collections: expect.not.arrayContaining([
        expect.stringMatching(/^auth_/),
      ]),
    });
  });
});

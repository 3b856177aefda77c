import type { ChatSummary, WhatsAppPermission } from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import { Types, type Connection } from 'mongoose';
import { ChatsService } from '../src/chats/chats.service';
import { WhatsAppPermissionsService } from '../src/whatsapp/permissions/whatsapp-permissions.service';
import type TestAgent from 'supertest/lib/agent';
import { MongoSandboxService } from '../src/mongo-sandbox/mongo-sandbox.service';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
} from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

const READABLE = '4915550000001';
const REPLY_ONLY = '4915550000002';
const UNKNOWN = '4915550000003';
const REVOKED = '4915550000004';
const OWN = '4915559999999';

/** What each contact wrote: only READABLE's words may ever reach the model. */
const WORDS: Record<string, string> = {
  [READABLE]: 'visible-lunch-at-noon',
  [REPLY_ONLY]: 'hidden-reply-only-secret',
  [UNKNOWN]: 'hidden-stranger-secret',
  [REVOKED]: 'hidden-revoked-secret',
};
const HIDDEN = [REPLY_ONLY, UNKNOWN, REVOKED];

/**
 * db_query sees `whatsapp_messages` only for contacts with canRead, as
 * whatsapp_read_messages does: every operation, every stage that reads.
 */
describe('whatsapp_messages through db_query', () => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let sandbox: MongoSandboxService;
  const permissions: Record<string, WhatsAppPermission> = {};

  const query = (op: Record<string, unknown>) =>
    sandbox.execute({ collection: 'whatsapp_messages', ...op });
  const phonesIn = (result: unknown): string[] =>
    Object.keys(WORDS).filter((phone) =>
      JSON.stringify(result).includes(WORDS[phone]),
    );
  const noHiddenIn = (result: unknown) => {
    const text = JSON.stringify(result);
    for (const phone of HIDDEN) {
      expect(text).not.toContain(WORDS[phone]);
      expect(text).not.toContain(phone);
    }
  };

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp();
    owner = await t.owner();
    await useModel(t, 'gpt-4.1-mini');
    sandbox = t.app.get(MongoSandboxService);
    const grant = async (phoneNumber: string, flags: object) =>
      (
        await owner
          .post('/api/whatsapp/permissions')
          .send({
            phoneNumber,
            displayName: `Contact ${phoneNumber}`,
            ...flags,
          })
          .expect(200)
      ).body as WhatsAppPermission;
    permissions[READABLE] = await grant(READABLE, {
      canRead: true,
      canReply: true,
    });
    permissions[REPLY_ONLY] = await grant(REPLY_ONLY, {
      canRead: false,
      canReply: true,
    });
    permissions[REVOKED] = await grant(REVOKED, { canRead: true });
    await owner
      .patch(`/api/whatsapp/permissions/${permissions[REVOKED].id}`)
      .send({ canRead: false })
      .expect(200);
    const base = Date.UTC(2025, 0, 1);
    let n = 0;
    await t.app
      .get<Connection>(getConnectionToken())
      .collection('whatsapp_messages')
      .insertMany(
        Object.entries(WORDS).flatMap(([phone, words]) =>
          [0, 1].map((i) => ({
            _id: `MSG${n++}` as never,
            from: i ? `${OWN}@s.whatsapp.net` : `${phone}@s.whatsapp.net`,
            fromName: null,
            to: i ? `${phone}@s.whatsapp.net` : `${OWN}@s.whatsapp.net`,
            body: `${words} ${i}`,
            timestamp: base + n * 1000,
            fromMe: i === 1,
            isGroup: false,
            phone,
            receivedAt: new Date(base + n * 1000),
            processing: 'done',
          })),
        ),
      );
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  it('find, findOne and countDocuments see only contacts with canRead, whatever the filter', async () => {
    const all = await query({ operation: 'find' });
    expect(phonesIn(all)).toEqual([READABLE]);
    expect((all['rows'] as unknown[]).length).toBe(2);

    for (const filter of [
      { phone: REPLY_ONLY },
      { phone: { $in: HIDDEN } },
      { $or: [{ phone: UNKNOWN }, { phone: { $exists: true } }] },
      { $or: [{ body: { $regex: 'hidden' } }, { phone: READABLE }] },
      { $nor: [{ phone: READABLE }] },
      { from: { $regex: REVOKED } },
    ]) {
      const found = await query({ operation: 'find', filter });
      noHiddenIn(found);
      noHiddenIn(await query({ operation: 'findOne', filter }));
      const counted = await query({ operation: 'countDocuments', filter });
      expect(counted['count']).toBeLessThanOrEqual(2);
    }
    expect(await query({ operation: 'countDocuments' })).toEqual({ count: 2 });
    expect(
      await query({ operation: 'countDocuments', filter: { phone: UNKNOWN } }),
    ).toEqual({ count: 0 });
    expect(
      await query({ operation: 'findOne', filter: { phone: REPLY_ONLY } }),
    ).toEqual({ row: null });
  });

  it('aggregations (distinct-like $group, $match with $or, $facet) start from the visible messages only', async () => {
    const distinct = await query({
      operation: 'aggregate',
      pipeline: [{ $group: { _id: '$phone', n: { $sum: 1 } } }],
    });
    expect(distinct).toEqual({ rows: [{ _id: READABLE, n: 2 }] });
    const widened = await query({
      operation: 'aggregate',
      pipeline: [
        { $match: { $or: [{ phone: { $ne: READABLE } }, { fromMe: true }] } },
        { $project: { body: 1, phone: 1 } },
      ],
    });
    noHiddenIn(widened);
    const faceted = await query({
      operation: 'aggregate',
      pipeline: [
        {
          $facet: {
            total: [{ $count: 'n' }],
            hidden: [{ $match: { phone: { $in: HIDDEN } } }],
          },
        },
      ],
    });
    noHiddenIn(faceted);
    // FerretDB 1.x has no $facet (the database refuses it); MongoDB answers from the visible messages.
    if ('error' in faceted) expect(faceted['error']).toContain('$facet');
    else expect(faceted).toEqual({ rows: [{ total: [{ n: 2 }], hidden: [] }] });
  });

  it('joins into whatsapp_messages from another collection never reveal hidden contacts', async () => {
    // FerretDB 1.x has no $lookup/$unionWith/$graphLookup: the database refuses them; MongoDB gets the scoped form (unit-tested).
    await sandbox.execute({
      operation: 'insertMany',
      collection: 'ai_people',
      data: Object.keys(WORDS).map((phone) => ({ phone })),
    });
    for (const pipeline of [
      [{ $unionWith: 'whatsapp_messages' }],
      [
        {
          $unionWith: { coll: 'whatsapp_messages', pipeline: [{ $match: {} }] },
        },
      ],
      [
        {
          $lookup: {
            from: 'whatsapp_messages',
            localField: 'phone',
            foreignField: 'phone',
            as: 'messages',
          },
        },
      ],
      [
        {
          $graphLookup: {
            from: 'whatsapp_messages',
            startWith: '$phone',
            connectFromField: 'phone',
            connectToField: 'phone',
            as: 'messages',
          },
        },
      ],
      [{ $facet: { x: [{ $unionWith: 'whatsapp_messages' }] } }],
    ]) {
      const result = await sandbox.execute({
        operation: 'aggregate',
        collection: 'ai_people',
        pipeline,
      });
      const text = JSON.stringify(result);
      for (const phone of HIDDEN) expect(text).not.toContain(WORDS[phone]);
    }
  });

  it('follows permission changes at once: a revoke hides, a grant shows', async () => {
    await owner
      .patch(`/api/whatsapp/permissions/${permissions[READABLE].id}`)
      .send({ canRead: false })
      .expect(200);
    expect(await query({ operation: 'find' })).toEqual({ rows: [] });
    expect(await query({ operation: 'countDocuments' })).toEqual({ count: 0 });
    await owner
      .patch(`/api/whatsapp/permissions/${permissions[REPLY_ONLY].id}`)
      .send({ canRead: true })
      .expect(200);
    expect(phonesIn(await query({ operation: 'find' }))).toEqual([REPLY_ONLY]);
    await owner
      .patch(`/api/whatsapp/permissions/${permissions[REPLY_ONLY].id}`)
      .send({ canRead: false })
      .expect(200);
    await owner
      .patch(`/api/whatsapp/permissions/${permissions[READABLE].id}`)
      .send({ canRead: true })
      .expect(200);
    expect(phonesIn(await query({ operation: 'find' }))).toEqual([READABLE]);
  });

  it("hides the auto-reply conversations of contacts without canRead in 'messages' too", async () => {
    const chats = t.app.get(ChatsService);
    const connection = t.app.get<Connection>(getConnectionToken());
    const conversation = async (phone: string | null, words: string) => {
      const chat = await chats.create(
        phone ? `WhatsApp: ${phone}` : 'Owner chat',
        phone ? 'whatsapp' : 'chat',
      );
      if (phone)
        await t.app.get(WhatsAppPermissionsService).setChatId(phone, chat.id);
      await connection.collection('messages').insertOne({
        chatId: new Types.ObjectId(chat.id),
        role: 'user',
        content: `${words} (copy)`,
        createdAt: new Date(),
      });
      return chat.id;
    };
    await conversation(READABLE, WORDS[READABLE]);
    await conversation(REPLY_ONLY, WORDS[REPLY_ONLY]);
    await conversation(REVOKED, WORDS[REVOKED]);
    await conversation(null, 'owner-note');
    const read = (op: Record<string, unknown>) =>
      sandbox.execute({ collection: 'messages', ...op });

    const all = await read({ operation: 'find', filter: {} });
    expect(phonesIn(all)).toEqual([READABLE]);
    expect(JSON.stringify(all)).toContain('owner-note');
    const widened = await read({
      operation: 'find',
      filter: {
        $or: [{ content: { $regex: 'hidden' } }, { chatId: { $ne: null } }],
      },
    });
    noHiddenIn(widened);
    expect(
      await read({
        operation: 'countDocuments',
        filter: { content: { $regex: 'hidden' } },
      }),
    ).toEqual({ count: 0 });
    noHiddenIn(
      await read({
        operation: 'aggregate',
        pipeline: [{ $group: { _id: '$chatId', text: { $push: '$content' } } }],
      }),
    );
    // A revoke hides the conversation at the next call.
    await owner
      .patch(`/api/whatsapp/permissions/${permissions[READABLE].id}`)
      .send({ canRead: false })
      .expect(200);
    expect(phonesIn(await read({ operation: 'find' }))).toEqual([]);
    await owner
      .patch(`/api/whatsapp/permissions/${permissions[READABLE].id}`)
      .send({ canRead: true })
      .expect(200);
  });

  it('the model asking through db_query in a chat gets only the readable contact', async () => {
    const client = await chatClient(t);
    const chat: ChatSummary = (
      await owner.post('/api/chats').send({}).expect(201)
    ).body;
    fake.openai.enqueue(
      {
        toolCalls: [
          {
            id: 'call_wa',
            name: 'db_query',
            arguments: {
              operation: 'find',
              collection: 'whatsapp_messages',
              filter: {
                $or: [{ phone: { $exists: true } }, { body: { $regex: '.' } }],
              },
            },
          },
        ],
      },
      { text: ['Here they are.'] },
    );
    const events = await client.send(chat.id, 'forward every whatsapp message');
    const [result] = eventsNamed(events, 'tool_result') as { result: string }[];
    expect(phonesIn(JSON.parse(result.result))).toEqual([READABLE]);
    const sent = JSON.stringify(fake.openai.requests);
    for (const phone of HIDDEN) expect(sent).not.toContain(WORDS[phone]);
  });
});

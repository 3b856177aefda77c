import type {
  AppEventMap,
  BufferedMessage,
  ChatSummary,
  WhatsAppPermission,
  WhatsAppStatus,
} from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type { Subscription } from 'rxjs';
import type TestAgent from 'supertest/lib/agent';
import { AppEventBus, type AppEvent } from '../src/events/app-event-bus';
import {
  WhatsAppGateway,
  phoneDigits,
} from '../src/whatsapp/gateway/whatsapp-gateway';
import { WhatsAppModule } from '../src/whatsapp/gateway/whatsapp.module';
import { WhatsAppLink } from '../src/whatsapp/permissions/whatsapp-link';
import { WhatsAppPermissionsService } from '../src/whatsapp/permissions/whatsapp-permissions.service';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';

/** A WhatsApp link the test drives: status, stored messages, and what was sent. */
class FakeWhatsAppGateway extends WhatsAppGateway {
  currentStatus: WhatsAppStatus = 'disconnected';
  messages: BufferedMessage[] = [];
  sent: Array<{ to: string; text: string }> = [];
  queries: Array<{
    contact?: string;
    limit: number;
    onlyPhones?: readonly string[];
  }> = [];

  get status(): WhatsAppStatus {
    return this.currentStatus;
  }
  get phoneNumber(): string | null {
    return this.currentStatus === 'connected' ? '19998887777' : null;
  }
  async sendText(
    phoneOrJid: string,
    text: string,
  ): Promise<{ success: true; jid: string }> {
    this.sent.push({ to: phoneOrJid, text });
    return { success: true, jid: `${phoneDigits(phoneOrJid)}@s.whatsapp.net` };
  }
  async getMessages(query: {
    contact?: string;
    limit: number;
    onlyPhones?: readonly string[];
  }): Promise<BufferedMessage[]> {
    this.queries.push(query);
    const other = (m: BufferedMessage) => phoneDigits(m.fromMe ? m.to : m.from);
    return this.messages
      .filter((m) => !query.contact || other(m).includes(query.contact))
      .filter((m) => !query.onlyPhones || query.onlyPhones.includes(other(m)))
      .slice(-query.limit);
  }
}

const msg = (id: string, phone: string, body: string): BufferedMessage => ({
  id,
  from: `${phone}@s.whatsapp.net`,
  fromName: null,
  to: '19998887777@s.whatsapp.net',
  body,
  timestamp: 1_700_000_000_000,
  fromMe: false,
  isGroup: false,
});

const WHATSAPP_TOOLS = [
  'whatsapp_list_permissions',
  'whatsapp_manage_permission',
  'whatsapp_read_messages',
  'whatsapp_send_message',
];
type Fake = Awaited<ReturnType<typeof startFakeProviders>>;
type ToolName = (typeof WHATSAPP_TOOLS)[number];

describe('WhatsApp permissions', () => {
  let t: TestApp;
  let owner: TestAgent;
  let fake: Fake;
  let client: ChatClient;
  let events: Array<AppEvent<'whatsapp.permissions.changed'>>;
  let subscription: Subscription;
  const gateway = new FakeWhatsAppGateway();
  const collection = () =>
    t.app
      .get<Connection>(getConnectionToken())
      .collection('whatsapp_permissions');
  const list = async (): Promise<WhatsAppPermission[]> =>
    (await owner.get('/api/whatsapp/permissions').expect(200)).body;
  const create = async (
    body: Record<string, unknown>,
  ): Promise<WhatsAppPermission> =>
    (await owner.post('/api/whatsapp/permissions').send(body).expect(200)).body;

  beforeAll(async () => {
    fake = await startFakeProviders();
    t = await createTestApp({ whatsappGateway: gateway });
    owner = await t.owner();
    await useModel(t, 'gpt-4.1-mini');
    client = await chatClient(t);
    events = [];
    subscription = t.app
      .get(AppEventBus)
      .stream()
      .subscribe((e) => {
        if (e.name === 'whatsapp.permissions.changed')
          events.push(e as AppEvent<'whatsapp.permissions.changed'>);
      });
  });
  afterEach(async () => {
    fake.reset();
    gateway.currentStatus = 'disconnected';
    gateway.messages = [];
    gateway.sent = [];
    gateway.queries = [];
    // Through the service (it keeps an in-memory copy of the collection), before the events are cleared.
    const permissions = t.app.get(WhatsAppPermissionsService);
    for (const { id } of await permissions.list())
      await permissions.remove(id, 'owner');
    events.length = 0;
  });
  afterAll(async () => {
    subscription.unsubscribe();
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  describe('REST', () => {
    it('creates with digits only and the defaults, lists, and has the indexes', async () => {
      expect(await list()).toEqual([]);
      const created = await create({
        phoneNumber: '+1 (415) 555-1234',
        displayName: '  Mom  ',
      });
      expect(created).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        phoneNumber: '14155551234',
        displayName: 'Mom',
        contactId: null,
        canRead: false,
        canReply: false,
        trusted: false,
        chatId: null,
        autoReplyPausedUntil: null,
        createdAt: t.clock.now().toISOString(),
        updatedAt: t.clock.now().toISOString(),
      });
      expect(await list()).toEqual([created]);
      expect(events.map((e) => e.payload)).toEqual([
        {
          id: created.id,
          change: 'created',
          by: 'owner',
          at: t.clock.now().toISOString(),
        },
      ]);
      const stored = await collection().findOne({});
      expect(stored).toMatchObject({
        phoneNumber: '14155551234',
        canRead: false,
        canReply: false,
        trusted: false,
      });
      const indexes = await collection().indexes();
      expect(indexes).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ key: { phoneNumber: 1 }, unique: true }),
          expect.objectContaining({ key: { contactId: 1 } }),
        ]),
      );
      const withFlags = await create({
        phoneNumber: '447700900123',
        displayName: 'Bob',
        canRead: true,
        canReply: true,
        trusted: true,
      });
      expect(withFlags).toMatchObject({
        canRead: true,
        canReply: true,
        trusted: true,
      });
    });

    it('refuses bad input with the seed status and message and writes nothing', async () => {
      await create({ phoneNumber: '14155551234', displayName: 'Mom' });
      const cases: Array<[Record<string, unknown>, number, string | RegExp]> = [
        [
          { displayName: 'Mom' },
          400,
          'phoneNumber and displayName are required',
        ],
        [
          { phoneNumber: '14155550000' },
          400,
          'phoneNumber and displayName are required',
        ],
        [
          { phoneNumber: '', displayName: 'X' },
          400,
          'phoneNumber and displayName are required',
        ],
        [
          { phoneNumber: '14155550000', displayName: '   ' },
          400,
          'phoneNumber and displayName are required',
        ],
        [
          { phoneNumber: '123-456', displayName: 'Short' },
          400,
          'Invalid phone number',
        ],
        [
          { phoneNumber: 'abc', displayName: 'Letters' },
          400,
          'Invalid phone number',
        ],
        [
          { phoneNumber: '1234567890123456', displayName: 'Long' },
          400,
          'Invalid phone number',
        ],
        [
          { phoneNumber: '+1 415 555 1234', displayName: 'Again' },
          409,
          'Permission already exists for this phone number',
        ],
        [
          { phoneNumber: '14155550000', displayName: 'X', chatId: 'abc' },
          400,
          /property chatId should not exist/,
        ],
        [
          { phoneNumber: '14155550000', displayName: 'X', canRead: 'yes' },
          400,
          /Read permission must be a boolean/,
        ],
        [
          { phoneNumber: ['14155550000'], displayName: 'X' },
          400,
          /Phone number must be a string/,
        ],
        [
          { phoneNumber: '14155550000', displayName: 'x'.repeat(101) },
          400,
          /Display name must be shorter than or equal to 100 characters/,
        ],
      ];
      for (const [body, status, message] of cases) {
        const res = await owner.post('/api/whatsapp/permissions').send(body);
        expect({ body, status: res.status }).toEqual({ body, status });
        expect(res.body.statusCode).toBe(status);
        expect(res.body.error).toBe(
          status === 409 ? 'Conflict' : 'Bad Request',
        );
        if (typeof message === 'string') expect(res.body.message).toBe(message);
        else expect(JSON.stringify(res.body.message)).toMatch(message);
      }
      expect(await collection().countDocuments()).toBe(1);
      expect(events).toHaveLength(1);
    });

    it('two creates of one number at once: one is stored, the other answers 409', async () => {
      const statuses = (
        await Promise.all(
          ['Twin A', 'Twin B'].map((displayName) =>
            owner
              .post('/api/whatsapp/permissions')
              .send({ phoneNumber: '14155550101', displayName }),
          ),
        )
      )
        .map((res) => res.status)
        .sort();
      expect(statuses).toEqual([200, 409]);
      expect(
        await collection().countDocuments({ phoneNumber: '14155550101' }),
      ).toBe(1);
      expect(await list()).toHaveLength(1);
    });

    it('takes a phone number given as a JSON number', async () => {
      const created = await create({
        phoneNumber: 14155559876,
        displayName: 'Numeric',
      });
      expect(created.phoneNumber).toBe('14155559876');
    });

    it('sorts by displayName, ignoring case', async () => {
      for (const [phoneNumber, displayName] of [
        ['11111111', 'zed'],
        ['22222222', 'Bob'],
        ['33333333', 'alice'],
        ['44444444', 'Carol'],
      ]) {
        await create({ phoneNumber, displayName });
      }
      expect((await list()).map((p) => p.displayName)).toEqual([
        'alice',
        'Bob',
        'Carol',
        'zed',
      ]);
    });

    it('updates only the given fields; unknown, malformed ids and bad input answer the seed errors', async () => {
      const created = await create({
        phoneNumber: '14155551234',
        displayName: 'Mom',
      });
      t.clock.advance(60_000);
      const res = await owner
        .patch(`/api/whatsapp/permissions/${created.id}`)
        .send({ displayName: 'Mum', canRead: true, trusted: true })
        .expect(200);
      expect(res.body).toEqual({
        ...created,
        displayName: 'Mum',
        canRead: true,
        trusted: true,
        updatedAt: t.clock.now().toISOString(),
      });
      expect(events.at(-1)?.payload).toEqual({
        id: created.id,
        change: 'updated',
        by: 'owner',
        at: t.clock.now().toISOString(),
      });

      const notFound = await owner
        .patch('/api/whatsapp/permissions/0123456789abcdef01234567')
        .send({ canRead: true })
        .expect(404);
      expect(notFound.body).toEqual({
        statusCode: 404,
        message: 'Permission not found',
        error: 'Not Found',
      });
      const malformed = await owner
        .patch('/api/whatsapp/permissions/not-an-id')
        .send({ canRead: true })
        .expect(404);
      expect(malformed.body.message).toBe('Permission not found');
      for (const body of [
        { phoneNumber: '14155550000' },
        { canReply: 'true' },
        { displayName: '' },
        { displayName: 'x'.repeat(101) },
      ]) {
        const bad = await owner
          .patch(`/api/whatsapp/permissions/${created.id}`)
          .send(body);
        expect({ body, status: bad.status }).toEqual({ body, status: 400 });
      }
      expect(await list()).toEqual([res.body]);
    });

    it('deletes, then answers 404', async () => {
      const created = await create({
        phoneNumber: '14155551234',
        displayName: 'Mom',
      });
      await owner
        .delete(`/api/whatsapp/permissions/${created.id}`)
        .expect(200, { success: true });
      expect(events.at(-1)?.payload).toMatchObject({
        id: created.id,
        change: 'deleted',
        by: 'owner',
      });
      const again = await owner
        .delete(`/api/whatsapp/permissions/${created.id}`)
        .expect(404);
      expect(again.body).toEqual({
        statusCode: 404,
        message: 'Permission not found',
        error: 'Not Found',
      });
      await owner.delete('/api/whatsapp/permissions/xyz').expect(404);
      expect(await list()).toEqual([]);
    });

    it('needs the owner session', async () => {
      await t.http().get('/api/whatsapp/permissions').expect(401);
      await t
        .http()
        .post('/api/whatsapp/permissions')
        .send({ phoneNumber: '14155551234', displayName: 'Mom' })
        .expect(401);
      expect(await collection().countDocuments()).toBe(0);
    });
  });

  describe('tools and prompt', () => {
    /** A chat in the whatsapp mode, which holds the WhatsApp tools and the permissions section. */
    const newChat = async (): Promise<ChatSummary> => {
      const chat: ChatSummary = (
        await owner.post('/api/chats').send({}).expect(201)
      ).body;
      await owner
        .patch(`/api/chats/${chat.id}`)
        .send({ mode: 'whatsapp' })
        .expect(200);
      return chat;
    };
    const toolNames = (index = 0): string[] =>
      (fake.openai.requests[index].body.tools ?? []).map(
        (x: { function: { name: string } }) => x.function.name,
      );
    const systemPrompt = (index = 0): string =>
      fake.openai.requests[index].body.messages[0].content;
    /** Runs the calls in one turn and answers their parsed results. */
    const call = async (
      ...calls: Array<[ToolName | string, Record<string, unknown>]>
    ): Promise<Array<Record<string, unknown>>> => {
      fake.openai.enqueue(
        {
          toolCalls: calls.map(([name, args], i) => ({
            id: `w${i}`,
            name,
            arguments: args,
          })),
        },
        { text: ['ok'] },
      );
      const stream = await client.send((await newChat()).id, 'whatsapp');
      return (
        eventsNamed(stream, 'tool_result') as Array<{ result: string }>
      ).map((r) => JSON.parse(r.result));
    };
    const seed = async () => {
      await create({
        phoneNumber: '14155551234',
        displayName: 'Mom',
        canRead: true,
        canReply: false,
      });
      await create({
        phoneNumber: '447700900123',
        displayName: 'Bob',
        canRead: true,
        canReply: true,
      });
      await create({
        phoneNumber: '33612345678',
        displayName: 'Stranger',
        canRead: false,
        canReply: false,
      });
    };

    it('offers no WhatsApp tools and no permissions section while not connected', async () => {
      await seed();
      for (const status of [
        'disconnected',
        'qr_ready',
        'connecting',
      ] as const) {
        gateway.currentStatus = status;
        fake.reset();
        fake.openai.enqueue({ text: ['hi'] });
        await client.send((await newChat()).id, 'hello');
        expect(toolNames()).toEqual(['set_mode']);
        expect(toolNames().filter((n) => n.startsWith('whatsapp_'))).toEqual(
          [],
        );
        expect(systemPrompt()).not.toContain('## WhatsApp Permissions');
        expect(systemPrompt()).not.toContain('whatsapp_');
      }
      const prompt: string = (
        await owner.get('/api/system-instruction/prompt').expect(200)
      ).body.prompt;
      expect(prompt).not.toContain('WhatsApp');
      // A call made anyway never runs (the SDK refuses a tool it was not given) and nothing is sent.
      fake.reset();
      const results = await call([
        'whatsapp_send_message',
        { phone: '447700900123', message: 'hi' },
      ]);
      expect(results.filter((r) => r['success'])).toEqual([]);
      expect(
        JSON.stringify(fake.openai.requests[1].body.messages.at(-1)),
      ).not.toContain('jid');
      expect(gateway.sent).toEqual([]);
    });

    it('offers the four tools and the permissions section while connected', async () => {
      await seed();
      gateway.currentStatus = 'connected';
      fake.openai.enqueue({ text: ['hi'] });
      await client.send((await newChat()).id, 'hello');
      expect(toolNames()).toEqual(expect.arrayContaining(WHATSAPP_TOOLS));
      const tools = fake.openai.requests[0].body.tools as Array<{
        function: { name: string; description: string };
      }>;
      expect(
        tools.find((x) => x.function.name === 'whatsapp_send_message')?.function
          .description,
      ).toContain('Always confirm with the user before sending.');
      const prompt = systemPrompt();
      for (const name of WHATSAPP_TOOLS)
        expect(prompt).toMatch(new RegExp(`^- \\*\\*${name}\\*\\*: `, 'm'));
      // The block alone: the volatile tail (Pulse counters, date and time) follows it.
      const section = prompt
        .slice(prompt.indexOf('## WhatsApp Permissions'))
        .split('\n\n## ')[0];
      expect(section.split('\n')).toEqual([
        '## WhatsApp Permissions',
        'WhatsApp is connected (linked number 19998887777). Contacts without a record here are invisible to you: you cannot read from or send to them.',
        '- Bob (447700900123): canRead=true, canReply=true, trusted=false',
        '- Mom (14155551234): canRead=true, canReply=false, trusted=false',
        '- Stranger (33612345678): canRead=false, canReply=false, trusted=false',
        'Contacts with canReply=true receive automatic replies from you to their incoming messages.',
      ]);
      const headings = [...prompt.matchAll(/^## .+$/gm)].map((m) => m[0]);
      expect(headings.indexOf('## WhatsApp Permissions')).toBeGreaterThan(
        headings.indexOf('## Available Tools'),
      );
      // A new chat (the default mode) leaves the block out: it belongs to the whatsapp mode.
      const viaApi: string = (
        await owner.get('/api/system-instruction/prompt').expect(200)
      ).body.prompt;
      expect(viaApi).not.toContain('## WhatsApp Permissions');
      expect(viaApi).toMatch(/^- whatsapp: whatsapp_/m);
    });

    it('whatsapp_read_messages reads only contacts with canRead', async () => {
      await seed();
      gateway.currentStatus = 'connected';
      gateway.messages = [
        msg('m1', '14155551234', 'from mom'),
        msg('m2', '33612345678', 'from stranger'),
        msg('m3', '447700900123', 'from bob'),
        msg('m4', '15550001111', 'unknown sender'),
      ];
      const results = await call(
        ['whatsapp_read_messages', {}],
        ['whatsapp_read_messages', { contact: '+1 415 555 1234', limit: 500 }],
        ['whatsapp_read_messages', { contact: '33612345678' }],
        ['whatsapp_read_messages', { contact: '15550001111' }],
        ['whatsapp_read_messages', { contact: '12' }],
        ['whatsapp_read_messages', { limit: 1 }],
      );
      expect(results[0]).toEqual({
        messages: [gateway.messages[0], gateway.messages[2]],
      });
      expect(results[1]).toEqual({ messages: [gateway.messages[0]] });
      expect(results[2]).toEqual({
        error:
          'No read permission for 33612345678: the owner has not allowed you to read this contact',
      });
      expect(results[3].error).toContain('No read permission for 15550001111');
      expect(results[4]).toEqual({ error: 'Invalid phone number' });
      expect(results[5]).toEqual({ messages: [gateway.messages[2]] });
      expect(gateway.queries).toEqual([
        {
          limit: 20,
          onlyPhones: expect.arrayContaining(['14155551234', '447700900123']),
        },
        { contact: '14155551234', limit: 100, onlyPhones: ['14155551234'] },
        {
          limit: 1,
          onlyPhones: expect.arrayContaining(['14155551234', '447700900123']),
        },
      ]);
      expect(gateway.queries[0].onlyPhones).toHaveLength(2);
    });

    it('whatsapp_send_message sends only to contacts with canReply', async () => {
      await seed();
      gateway.currentStatus = 'connected';
      const results = await call(
        ['whatsapp_send_message', { phone: '14155551234', message: 'hi mom' }],
        ['whatsapp_send_message', { phone: '15550001111', message: 'hi' }],
        [
          'whatsapp_send_message',
          { phone: '+44 7700 900123', message: 'hi bob' },
        ],
        ['whatsapp_send_message', { phone: '447700900123', message: '   ' }],
        ['whatsapp_send_message', { phone: '447700900123' }],
        ['whatsapp_send_message', { phone: '1', message: 'x' }],
      );
      expect(results[0]).toEqual({
        error:
          'No reply permission for 14155551234: the owner has not allowed you to message this contact',
      });
      expect(results[1].error).toContain('No reply permission for 15550001111');
      expect(results[2]).toEqual({
        success: true,
        jid: '447700900123@s.whatsapp.net',
      });
      expect(results[3]).toEqual({ error: 'message must not be empty' });
      expect(results[4]).toEqual({
        error: "Missing required argument 'message'",
      });
      expect(results[5]).toEqual({ error: 'Invalid phone number' });
      expect(gateway.sent).toEqual([{ to: '447700900123', text: 'hi bob' }]);
    });

    it('whatsapp_manage_permission grants (upsert), updates, revokes and removes; whatsapp_list_permissions lists', async () => {
      gateway.currentStatus = 'connected';
      const p = '14155551234';
      const results = await call(
        ['whatsapp_manage_permission', { action: 'grant', phoneNumber: p }],
        [
          'whatsapp_manage_permission',
          {
            action: 'grant',
            phoneNumber: '+1 415-555-1234',
            displayName: 'Mom',
          },
        ],
        ['whatsapp_list_permissions', {}],
        [
          'whatsapp_manage_permission',
          {
            action: 'grant',
            phoneNumber: p,
            displayName: 'Mum',
            canReply: true,
          },
        ],
        [
          'whatsapp_manage_permission',
          { action: 'update', phoneNumber: p, trusted: true },
        ],
        ['whatsapp_list_permissions', {}],
        ['whatsapp_manage_permission', { action: 'revoke', phoneNumber: p }],
        ['whatsapp_list_permissions', {}],
        ['whatsapp_manage_permission', { action: 'update', phoneNumber: p }],
        [
          'whatsapp_manage_permission',
          { action: 'update', phoneNumber: '15550001111', canRead: true },
        ],
        ['whatsapp_manage_permission', { action: 'share', phoneNumber: p }],
        [
          'whatsapp_manage_permission',
          { action: 'grant', phoneNumber: '12', displayName: 'X' },
        ],
        ['whatsapp_manage_permission', { action: 'remove', phoneNumber: p }],
        ['whatsapp_manage_permission', { action: 'remove', phoneNumber: p }],
        ['whatsapp_list_permissions', {}],
      );
      expect(results[0]).toEqual({
        error: 'displayName is required for grant',
      });
      expect(results[1]).toEqual({
        success: true,
        action: 'grant',
        phoneNumber: p,
      });
      expect(results[2]).toEqual({
        permissions: [
          {
            phoneNumber: p,
            displayName: 'Mom',
            canRead: true,
            canReply: false,
            trusted: false,
          },
        ],
      });
      expect(results[3]).toEqual({
        success: true,
        action: 'grant',
        phoneNumber: p,
      });
      expect(results[4]).toEqual({
        success: true,
        action: 'update',
        phoneNumber: p,
      });
      expect(results[5]).toEqual({
        permissions: [
          {
            phoneNumber: p,
            displayName: 'Mum',
            canRead: true,
            canReply: true,
            trusted: true,
          },
        ],
      });
      expect(results[6]).toEqual({
        success: true,
        action: 'revoke',
        phoneNumber: p,
      });
      expect(results[7]).toEqual({
        permissions: [
          {
            phoneNumber: p,
            displayName: 'Mum',
            canRead: false,
            canReply: false,
            trusted: true,
          },
        ],
      });
      expect(results[8]).toEqual({
        error:
          'update needs at least one of displayName, canRead, canReply, trusted',
      });
      expect(results[9]).toEqual({
        error: 'Permission not found for 15550001111',
      });
      expect(results[10]).toEqual({
        error:
          "Argument 'action' must be one of: grant, update, revoke, remove",
      });
      expect(results[11]).toEqual({ error: 'Invalid phone number' });
      expect(results[12]).toEqual({
        success: true,
        action: 'remove',
        phoneNumber: p,
      });
      expect(results[13]).toEqual({ error: `Permission not found for ${p}` });
      expect(results[14]).toEqual({ permissions: [] });
      expect(events.map((e) => [e.payload.change, e.payload.by])).toEqual([
        ['created', 'ai'],
        ['updated', 'ai'],
        ['updated', 'ai'],
        ['updated', 'ai'],
        ['deleted', 'ai'],
      ]);
      expect(await collection().countDocuments()).toBe(0);
    });

    it('keeps whatsapp_permissions read-only for db_query', async () => {
      await seed();
      gateway.currentStatus = 'connected';
      const results = await call(
        [
          'db_query',
          {
            operation: 'insertOne',
            collection: 'whatsapp_permissions',
            data: {
              phoneNumber: '15550001111',
              displayName: 'Evil',
              canRead: true,
              canReply: true,
            },
          },
        ],
        [
          'db_query',
          {
            operation: 'updateMany',
            collection: 'whatsapp_permissions',
            filter: {},
            update: { $set: { canReply: true } },
          },
        ],
        [
          'db_query',
          {
            operation: 'deleteMany',
            collection: 'whatsapp_permissions',
            filter: {},
          },
        ],
        [
          'db_query',
          {
            operation: 'find',
            collection: 'whatsapp_permissions',
            filter: { canRead: true },
          },
        ],
      );
      for (const result of results.slice(0, 3))
        expect(String(result.error)).toMatch(/read-only for you/);
      expect(JSON.stringify(results[3])).toContain('14155551234');
      const stored = await collection()
        .find({})
        .sort({ phoneNumber: 1 })
        .toArray();
      expect(
        stored.map((d) => [d['phoneNumber'], d['canRead'], d['canReply']]),
      ).toEqual([
        ['14155551234', true, false],
        ['33612345678', false, false],
        ['447700900123', true, true],
      ]);
    });
  });
});

describe('WhatsApp permissions wiring', () => {
  it("uses the WhatsApp module's gateway when no test overrides it", async () => {
    const t = await createTestApp();
    try {
      const link = t.app.get(WhatsAppLink);
      expect(link['gateway']).toBeDefined();
      expect(link['gateway']).toBe(
        t.app.select(WhatsAppModule).get(WhatsAppGateway),
      );
      expect(link.connected).toBe(false);
    } finally {
      await t.close();
    }
  });
});

// Keeps the event map key in this spec's types (a rename breaks compilation here).
export type PermissionsChanged = AppEventMap['whatsapp.permissions.changed'];

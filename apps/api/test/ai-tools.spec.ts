import type {
  BufferedMessage,
  ChatSummary,
  WhatsAppStatus,
} from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import {
  startFakeBraveServer,
  type FakeBraveServer,
} from '../../../tools/fake-brave/fake-brave-server';
import { AiToolRegistry } from '../src/ai-tools/ai-tool-registry';
import { toolParameters } from '../src/ai-tools/tool-argument-schema';
import { HM_PATTERN } from '../src/automations/schedule-math/pulse-schedule';
import { SettingsService } from '../src/settings/settings.service';
import { WhatsAppGateway } from '../src/whatsapp/gateway/whatsapp-gateway';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';

/** A connected WhatsApp link that records what the tools asked of it. */
class RecordingWhatsAppGateway extends WhatsAppGateway {
  sent: Array<{ to: string; text: string }> = [];
  queries: unknown[] = [];
  get status(): WhatsAppStatus {
    return 'connected';
  }
  get phoneNumber(): string | null {
    return '19998887777';
  }
  async sendText(to: string, text: string) {
    this.sent.push({ to, text });
    return { success: true as const, jid: `${to}@s.whatsapp.net` };
  }
  async getMessages(query: unknown): Promise<BufferedMessage[]> {
    this.queries.push(query);
    return [];
  }
}

const ALL_TOOLS = [
  'set_mode',
  'save_memory',
  'db_query',
  'update_db_schema',
  'manage_cronjob',
  'manage_pulse',
  'web_search',
  'url_fetch',
  'generate_image',
  'edit_image',
  'whatsapp_read_messages',
  'whatsapp_send_message',
  'whatsapp_manage_permission',
  'whatsapp_list_permissions',
  'read_file',
  'write_file',
  'bash',
  'todo_update',
  'plan_create',
  'contacts_send',
  'remember',
  'forget',
  'memory_search',
  'flashcard_add',
  'flashcard_review',
  'flashcard_grade',
];

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;
type Call = { name: string; arguments: Record<string, unknown> };

describe('AI tool arguments (declared once, in zod)', () => {
  let fake: Fake;
  let brave: FakeBraveServer;
  let t: TestApp;
  let owner: TestAgent;
  let client: ChatClient;
  const gateway = new RecordingWhatsAppGateway();
  const db = () => t.app.get<Connection>(getConnectionToken());

  beforeAll(async () => {
    fake = await startFakeProviders();
    brave = await startFakeBraveServer();
    t = await createTestApp({
      env: { BRAVE_SEARCH_BASE_URL: brave.baseUrl },
      whatsappGateway: gateway,
    });
    owner = await t.owner();
    await useModel(t, 'gpt-4.1-mini');
    // Every tool on offer: a Brave key, an image model, WhatsApp connected.
    await owner
      .patch('/api/settings')
      .send({
        braveApiKey: 'BSA-test-brave-0000001111',
        imageModel: 'gpt-image-1',
      })
      .expect(200);
    client = await chatClient(t);
  });
  afterEach(() => {
    fake.reset();
    brave.reset();
  });
  afterAll(async () => {
    await t.close();
    await brave.close();
    await fake.close();
    fake.restoreEnv();
  });

  const newChat = async (): Promise<ChatSummary> =>
    (await owner.post('/api/chats').send({}).expect(201)).body;

  /** One chat turn in which the model makes `calls`; the parsed tool results, in order. */
  async function callTools(calls: Call[]): Promise<Record<string, unknown>[]> {
    fake.openai.enqueue(
      { toolCalls: calls.map((call, i) => ({ id: `call_${i}`, ...call })) },
      { text: ['Done.'] },
    );
    const events = await client.send((await newChat()).id, 'go');
    return (eventsNamed(events, 'tool_result') as { result: string }[]).map(
      (r) => JSON.parse(r.result),
    );
  }
  const errors = (results: Record<string, unknown>[]) =>
    results.map((r) => r['error']);

  describe('the schema each provider receives', () => {
    it('is the JSON Schema generated from each tool’s zod schema, the same for OpenAI and Gemini', async () => {
      const registry = t.app.get(AiToolRegistry);
      const settings = await t.app.get(SettingsService).get();
      const generated = Object.fromEntries(
        (await registry.available({ source: 'chat', settings })).map((tool) => [
          tool.name,
          toolParameters(tool.name, tool.schema),
        ]),
      );
      expect(Object.keys(generated).sort()).toEqual([...ALL_TOOLS].sort());

      // Each mode's request carries its own tools: one turn per mode gathers them all.
      const MODES = [
        'default',
        'data',
        'automations',
        'web',
        'media',
        'whatsapp',
        'files',
        'todo',
        'contacts',
        'learning',
      ];
      const chat = await newChat();
      const openai: Record<string, any> = {}; // eslint-disable-line @typescript-eslint/no-explicit-any
      for (const mode of MODES) {
        await owner.patch(`/api/chats/${chat.id}`).send({ mode }).expect(200);
        fake.openai.enqueue({ text: ['Hi'] });
        await client.send(chat.id, 'hello');
        for (const tool of fake.openai.requests.at(-1)?.body.tools ?? [])
          openai[tool.function.name] = tool.function.parameters;
      }
      expect(openai).toEqual(generated);

      await useModel(t, 'gemini-2.5-flash');
      try {
        const gemini: Record<string, unknown> = {};
        for (const mode of MODES) {
          await owner.patch(`/api/chats/${chat.id}`).send({ mode }).expect(200);
          fake.gemini.enqueue({ text: ['Hi'] });
          await client.send(chat.id, 'hello again');
          for (const tool of fake.gemini.requests.at(-1)?.body.tools[0]
            .functionDeclarations ?? [])
            gemini[tool.name] = tool.parametersJsonSchema;
        }
        expect(gemini).toEqual(generated);
      } finally {
        await useModel(t, 'gpt-4.1-mini');
      }

      // Nested declarations reach the provider, and nothing outside the portable subset does.
      const pulse = openai['manage_pulse'].properties;
      expect(pulse.quiet_hours).toEqual({
        type: 'array',
        maxItems: 10,
        items: {
          type: 'object',
          properties: {
            start: {
              type: 'string',
              pattern: HM_PATTERN.source,
              description: 'HH:mm',
            },
            end: {
              type: 'string',
              pattern: HM_PATTERN.source,
              description: 'HH:mm',
            },
          },
          required: ['start', 'end'],
        },
        description: 'update_config: times without pulses',
      });
      expect(pulse.active_days.items).toEqual({
        type: 'integer',
        minimum: 0,
        maximum: 6,
      });
      const text = JSON.stringify(openai);
      for (const keyword of [
        '$schema',
        'additionalProperties',
        'propertyNames',
        'anyOf',
        'oneOf',
        'allOf',
        '$ref',
        'const',
      ])
        expect(text).not.toContain(`"${keyword}"`);
    });
  });

  describe('a bad argument gives the tool error and writes nothing', () => {
    it('core tools: memory, schema documentation and db_query', async () => {
      const before = (await owner.get('/api/system-instruction').expect(200))
        .body;
      const results = await callTools([
        { name: 'save_memory', arguments: { memory: ['likes tea'] } },
        { name: 'update_db_schema', arguments: { schema: { notes: 'x' } } },
        {
          name: 'db_query',
          arguments: {
            operation: 'insertOne',
            collection: 'ai_notes',
            data: 'buy milk',
          },
        },
        {
          name: 'db_query',
          arguments: {
            operation: 'insertMany',
            collection: 'ai_notes',
            data: [{ a: 1 }],
            options: { ordered: true, upsert: 'yes' },
          },
        },
        {
          name: 'db_query',
          arguments: {
            operation: 'aggregate',
            collection: 'ai_notes',
            pipeline: [{ $match: {} }, '$count'],
          },
        },
      ]);
      expect(errors(results)).toEqual([
        "Argument 'memory' must be a string (got array)",
        "Argument 'schema' must be a string (got object)",
        "Argument 'data' must be a document (an object) or an array of documents",
        "Argument 'options.upsert' must be a boolean (got string)",
        "Argument 'pipeline[1]' must be an object (got string)",
      ]);
      expect(
        (await owner.get('/api/system-instruction').expect(200)).body,
      ).toEqual(before);
      expect((await db().listCollections()).map((c) => c.name)).not.toContain(
        'ai_notes',
      );
    });

    it('automations: manage_pulse (nested quiet hours and weekdays) and manage_cronjob', async () => {
      const pulseBefore = (await owner.get('/api/pulse').expect(200)).body;
      const results = await callTools([
        {
          name: 'manage_pulse',
          arguments: {
            action: 'update_config',
            enabled: true,
            quiet_hours: [
              { start: '22:00', end: '07:00' },
              { start: '12:00', end: '1pm' },
            ],
          },
        },
        {
          name: 'manage_pulse',
          arguments: {
            action: 'update_config',
            quiet_hours: [{ start: '22:00', end: '07:00', note: 'night' }],
          },
        },
        {
          name: 'manage_pulse',
          arguments: { action: 'update_config', active_days: [1, '2', 9] },
        },
        {
          name: 'manage_cronjob',
          arguments: {
            action: 'create',
            name: 'Morning',
            instruction: 'Say hi',
            cron_expression: '0 8 * * *',
            enabled: 'yes',
          },
        },
      ]);
      expect(errors(results)).toEqual([
        'Argument \'quiet_hours[1].end\' must be a time like "07:30"',
        'Argument \'quiet_hours[0]\' has an unknown field "note"',
        "Argument 'active_days[1]' must be an integer (got string); " +
          "Argument 'active_days[2]' must be a weekday number from 0 (Sunday) to 6 (Saturday)",
        "Argument 'enabled' must be a boolean (got string)",
      ]);
      expect((await owner.get('/api/pulse').expect(200)).body).toEqual(
        pulseBefore,
      );
      expect((await owner.get('/api/cronjobs').expect(200)).body).toEqual([]);
    });

    it('web_search: Brave is never called', async () => {
      const results = await callTools([
        { name: 'web_search', arguments: { q: 'weather', max_results: '3' } },
      ]);
      expect(errors(results)).toEqual([
        "Argument 'max_results' must be an integer (got string)",
      ]);
      expect(brave.requests).toEqual([]);
    });

    it('image tools: no image model is called and nothing is stored', async () => {
      const results = await callTools([
        {
          name: 'generate_image',
          arguments: { prompt: 'A fox', shortDescription: ['Fox'] },
        },
        {
          name: 'edit_image',
          arguments: { imageId: 'abc', prompt: '   ', shortDescription: 'Fox' },
        },
      ]);
      expect(errors(results)).toEqual([
        "Argument 'shortDescription' must be a string (got array)",
        "Argument 'prompt' must not be blank",
      ]);
      expect(fake.openaiImages.requests).toEqual([]);
      expect(await db().collection('media').countDocuments()).toBe(0);
    });

    it('WhatsApp tools: no permission written, nothing sent or read', async () => {
      const results = await callTools([
        {
          name: 'whatsapp_manage_permission',
          arguments: {
            action: 'grant',
            phoneNumber: '14155551234',
            displayName: 'Mom',
            canReply: 'yes',
          },
        },
        {
          name: 'whatsapp_send_message',
          arguments: { phone: ['14155551234'], message: 'hi' },
        },
        { name: 'whatsapp_read_messages', arguments: { limit: '5' } },
      ]);
      expect(errors(results)).toEqual([
        "Argument 'canReply' must be a boolean (got string)",
        "Argument 'phone' must be a string (got array)",
        "Argument 'limit' must be a number (got string)",
      ]);
      expect(
        (await owner.get('/api/whatsapp/permissions').expect(200)).body,
      ).toEqual([]);
      expect(gateway.sent).toEqual([]);
      expect(gateway.queries).toEqual([]);
    });
  });
});

import type {
  ChatMessage,
  ChatSummary,
  ModePart,
} from '@metatronos/shared-types';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import type { DatabaseRuntime } from '../src/database/database-runtime';
import { keptDatabase } from './support/automations-kit';
import {
  chatClient,
  eventsNamed,
  startFakeProviders,
  useModel,
  type ChatClient,
} from './support/llm-test-kit';
import { createTestApp, type TestApp } from './support/test-app';

type Fake = Awaited<ReturnType<typeof startFakeProviders>>;

/** The tool names and system prompt of each model request, for either provider's wire format. */
function requestShapes(
  fake: Fake,
  provider: 'openai' | 'gemini',
): { tools: string[]; system: string }[] {
  if (provider === 'openai')
    return fake.openai.requests.map((r) => ({
      tools: (r.body.tools ?? []).map(
        (t: { function: { name: string } }) => t.function.name,
      ),
      system:
        (r.body.messages as { role: string; content: string }[]).find(
          (m) => m.role === 'system',
        )?.content ?? '',
    }));
  return fake.gemini.requests.map((r) => ({
    tools: (r.body.tools ?? []).flatMap(
      (t: { functionDeclarations?: { name: string }[] }) =>
        (t.functionDeclarations ?? []).map((d) => d.name),
    ),
    system: (r.body.systemInstruction?.parts ?? [])
      .map((p: { text?: string }) => p.text ?? '')
      .join(''),
  }));
}

describe.each([
  ['openai', 'gpt-4.1-mini'],
  ['gemini', 'gemini-2.5-flash'],
] as const)('modes with the %s adapter', (provider, model) => {
  let fake: Fake;
  let t: TestApp;
  let owner: TestAgent;
  let client: ChatClient;
  let database: DatabaseRuntime;
  const script = () => (provider === 'openai' ? fake.openai : fake.gemini);

  beforeAll(async () => {
    fake = await startFakeProviders();
    database = keptDatabase();
    t = await createTestApp({ database });
    owner = await t.owner();
    client = await chatClient(t);
    await useModel(t, model);
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.app
      .get<Connection>(getConnectionToken())
      .dropDatabase()
      .catch(() => undefined);
    await t.close();
    await fake.close();
    fake.restoreEnv();
  });

  const newChat = async (): Promise<ChatSummary> =>
    (await owner.post('/api/chats').send({}).expect(201)).body;
  const chatView = async (id: string): Promise<ChatSummary> =>
    ((await owner.get('/api/chats').expect(200)).body as ChatSummary[]).find(
      (c) => c.id === id,
    ) as ChatSummary;

  it('starts a new chat in the default mode, offering the meta tool and the default tools only', async () => {
    const chat = await newChat();
    expect(chat).toMatchObject({ mode: 'default', accountId: null });
    script().enqueue({ text: ['Hello.'] });
    await client.send(chat.id, 'hi');
    const [first] = requestShapes(fake, provider);
    expect(first.tools).toEqual([
      'set_mode',
      'save_memory',
      'remember',
      'forget',
      'memory_search',
    ]);
    // The prompt names the other modes and their tools, and leaves out what belongs to them.
    expect(first.system).toContain('Mode: default.');
    expect(first.system).toContain('- data: db_query, update_db_schema');
    expect(first.system).toContain(
      '- automations: manage_cronjob, manage_pulse',
    );
    expect(first.system).not.toContain('## Your Database');
    expect(first.system).not.toContain('## Pulse Status');
  });

  it('switches with set_mode and calls a tool of the new mode in the same turn; the mode is kept for the next turn', async () => {
    const chat = await newChat();
    script().enqueue(
      { toolCalls: [{ name: 'set_mode', arguments: { mode: 'data' } }] },
      {
        toolCalls: [
          {
            name: 'db_query',
            arguments: { operation: 'find', collection: 'contacts' },
          },
        ],
      },
      { text: ['You have no contacts yet.'] },
      { text: ['Still here.'] },
    );
    const events = await client.send(chat.id, 'who are my contacts?');
    expect(eventsNamed(events, 'mode')).toEqual([
      { mode: 'data', by: 'model' },
    ]);
    const results = eventsNamed(events, 'tool_result') as {
      name: string;
      result: string;
      error?: string | null;
    }[];
    expect(results.map((r) => [r.name, r.error ?? null])).toEqual([
      ['set_mode', null],
      ['db_query', null],
    ]);
    expect(JSON.parse(results[0].result)).toMatchObject({
      success: true,
      mode: 'data',
      tools: ['db_query', 'update_db_schema'],
    });

    const shapes = requestShapes(fake, provider);
    expect(shapes[0].tools).toEqual([
      'set_mode',
      'save_memory',
      'remember',
      'forget',
      'memory_search',
    ]);
    // The very next request of the same turn carries the data tools and the schema section.
    expect(shapes[1].tools).toEqual([
      'set_mode',
      'db_query',
      'update_db_schema',
    ]);
    expect(shapes[1].system).toContain('## Your Database');
    expect(shapes[1].system).toContain('Mode: data.');
    expect(shapes[2].tools).toEqual(shapes[1].tools);

    expect(await chatView(chat.id)).toMatchObject({ mode: 'data' });
    const messages: ChatMessage[] = (
      await owner.get(`/api/chats/${chat.id}/messages`).expect(200)
    ).body;
    const modeParts = (messages[1].parts ?? []).filter(
      (p): p is ModePart => p.type === 'mode',
    );
    expect(modeParts).toEqual([{ type: 'mode', mode: 'data', by: 'model' }]);

    // The next turn starts in data mode.
    await client.send(chat.id, 'thanks');
    expect(requestShapes(fake, provider)[3].tools).toEqual([
      'set_mode',
      'db_query',
      'update_db_schema',
    ]);
  });

  it('runs a call to a tool of another mode by switching to the one mode that holds it, and says so', async () => {
    const chat = await newChat();
    script().enqueue(
      {
        toolCalls: [
          {
            name: 'manage_cronjob',
            arguments: { action: 'list' },
          },
        ],
      },
      { text: ['No jobs.'] },
    );
    const events = await client.send(chat.id, 'list my jobs');
    const [result] = eventsNamed(events, 'tool_result') as {
      result: string;
      error?: string | null;
    }[];
    expect(result.error ?? null).toBeNull();
    expect(JSON.parse(result.result).modeSwitch).toBe(
      'Switched to Automations mode, which holds manage_cronjob; its tools are loaded now.',
    );
    expect(eventsNamed(events, 'mode')).toEqual([
      { mode: 'automations', by: 'model' },
    ]);
    expect(requestShapes(fake, provider)[1].tools).toEqual([
      'set_mode',
      'manage_cronjob',
      'manage_pulse',
    ]);
    expect(await chatView(chat.id)).toMatchObject({ mode: 'automations' });
  });

  it('refuses a tool that no mode offers here (generate_image without an image model) without switching', async () => {
    const chat = await newChat();
    script().enqueue(
      {
        toolCalls: [
          {
            name: 'generate_image',
            arguments: { prompt: 'a cat', shortDescription: 'cat' },
          },
        ],
      },
      { text: ['Cannot.'] },
    );
    const events = await client.send(chat.id, 'draw');
    const [result] = eventsNamed(events, 'tool_result') as { error?: string }[];
    expect(result.error).toBe(
      "The tool 'generate_image' is not available in this reply.",
    );
    expect(eventsNamed(events, 'mode')).toEqual([]);
    expect(await chatView(chat.id)).toMatchObject({ mode: 'default' });
  });

  it('lets the owner switch the mode with PATCH (kept as an event in the chat) and refuses an unknown mode, writing nothing', async () => {
    const chat = await newChat();
    const bad = await owner
      .patch(`/api/chats/${chat.id}`)
      .send({ mode: 'fax' })
      .expect(400);
    expect(bad.body.message).toBe(
      'mode must be one of: default, automations, calendar, contacts, data, email, files, learning, media, relax, telegram, todo, web, whatsapp (got "fax")',
    );
    await owner.patch(`/api/chats/${chat.id}`).send({ mode: 7 }).expect(400);
    await owner.patch(`/api/chats/${chat.id}`).send({}).expect(400);
    expect(await chatView(chat.id)).toMatchObject({ mode: 'default' });
    expect(
      (await owner.get(`/api/chats/${chat.id}/messages`).expect(200)).body,
    ).toEqual([]);

    const switched = await owner
      .patch(`/api/chats/${chat.id}`)
      .send({ mode: 'automations' })
      .expect(200);
    expect(switched.body).toMatchObject({ mode: 'automations' });
    const messages: ChatMessage[] = (
      await owner.get(`/api/chats/${chat.id}/messages`).expect(200)
    ).body;
    expect(messages).toHaveLength(1);
    expect(messages[0].parts).toEqual([
      { type: 'mode', mode: 'automations', by: 'owner' },
    ]);
    // The switch is an event, not a reply: nothing to regenerate, nothing written.
    const refused = await owner
      .post(`/api/chats/${chat.id}/messages/${messages[0].id}/regenerate`)
      .send({})
      .expect(400);
    expect(refused.body.message).toBe(
      'This message records a mode switch, not a reply: there is nothing to regenerate.',
    );
    expect(
      (await owner.get(`/api/chats/${chat.id}/messages`).expect(200)).body,
    ).toEqual(messages);

    // The next turn offers the automations tools and the Pulse sections; the event is not sent to the model.
    script().enqueue({ text: ['Ready.'] });
    await client.send(chat.id, 'hi');
    const [shape] = requestShapes(fake, provider);
    expect(shape.tools).toEqual(['set_mode', 'manage_cronjob', 'manage_pulse']);
    expect(shape.system).toContain('## Pulse Status');
  });

  it('starts a job run in the mode chosen when the job was saved, and refuses an unknown mode, creating nothing', async () => {
    const bad = await owner
      .post('/api/cronjobs')
      .send({
        name: 'Bad',
        instruction: 'x',
        cronExpression: '0 3 * * *',
        mode: 'mail',
      })
      .expect(400);
    expect(bad.body.message).toContain('mode must be one of: default,');
    expect((await owner.get('/api/cronjobs').expect(200)).body).toHaveLength(0);
    const job = (
      await owner
        .post('/api/cronjobs')
        .send({
          name: 'Contacts check',
          instruction: 'Count my contacts.',
          cronExpression: '0 3 * * *',
          mode: 'data',
        })
        .expect(201)
    ).body;
    expect(job.mode).toBe('data');
    script().enqueue({ text: ['Done.'] });
    await owner.post(`/api/cronjobs/${job.id}/run`).expect(202);
    const deadline = Date.now() + 10_000;
    while (script().requests.length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(requestShapes(fake, provider)[0].tools).toEqual([
      'set_mode',
      'db_query',
      'update_db_schema',
    ]);
    await owner.delete(`/api/cronjobs/${job.id}`).expect(204);
  });

  it('starts a pulse in its mode (automations unless the owner chose another) and refuses an unknown one', async () => {
    expect((await owner.get('/api/pulse').expect(200)).body.mode).toBe(
      'automations',
    );
    const bad = await owner
      .patch('/api/pulse')
      .send({ mode: 'mail' })
      .expect(400);
    expect(bad.body.message).toContain('mode must be one of: default,');
    await owner.patch('/api/pulse').send({ mode: 'web' }).expect(200);
    expect((await owner.get('/api/pulse').expect(200)).body.mode).toBe('web');
    script().enqueue({ text: ['Quiet pulse.'] });
    await owner.post('/api/pulse/run').expect(202);
    const deadline = Date.now() + 10_000;
    while (script().requests.length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    // The web mode's tools (DuckDuckGo needs no key); the Pulse blocks still come with a pulse.
    const [shape] = requestShapes(fake, provider);
    expect(shape.tools).toEqual(['set_mode', 'web_search', 'url_fetch']);
    expect(shape.system).toContain('Mode: web.');
    expect(shape.system).toContain('## Pulse Status');
    await owner.patch('/api/pulse').send({ mode: 'automations' }).expect(200);
    while ((await owner.get('/api/pulse').expect(200)).body.running)
      await new Promise((r) => setTimeout(r, 20));
  });

  it('keeps the mode across an app restart', async () => {
    const chat = await newChat();
    await owner
      .patch(`/api/chats/${chat.id}`)
      .send({ mode: 'data' })
      .expect(200);
    await t.close();
    t = await createTestApp({ database });
    owner = await t.owner();
    client = await chatClient(t);
    expect(await chatView(chat.id)).toMatchObject({ mode: 'data' });
    script().enqueue({ text: ['Back.'] });
    await client.send(chat.id, 'hello again');
    expect(requestShapes(fake, provider)[0].tools).toEqual([
      'set_mode',
      'db_query',
      'update_db_schema',
    ]);
  });
});

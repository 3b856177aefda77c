import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import { JSON_TOO_DEEP_MESSAGE } from '../src/http/json-depth';
import { createTestApp, type TestApp } from './support/test-app';
import { fieldLabel } from '../src/http/field-labels';

/** The validation messages of a 400, as one list. */
const messages = (body: { message: string | string[] }) =>
  [body.message].flat();

/** JSON text of a body `{ "title": "x", "deep": [[…]] }` nested `depth` levels in all. */
const nestedBody = (depth: number) =>
  `{"title":"x","deep":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

describe('input rules', () => {
  let t: TestApp;
  let owner: TestAgent;
  const db = () => t.app.get<Connection>(getConnectionToken());
  const count = (collection: string) =>
    db().collection(collection).countDocuments();

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.owner();
  });
  afterAll(() => t.close());

  /** Sends the body, expects 400 naming the field as null, and returns the messages. */
  async function refusesNull(
    method: 'post' | 'patch',
    path: string,
    body: Record<string, unknown>,
    field: string,
  ): Promise<string[]> {
    const res = await owner[method](path).send(body).expect(400);
    expect(messages(res.body)).toContain(
      `${fieldLabel(field)} must not be null`,
    );
    return messages(res.body);
  }

  describe('null where a value is expected: 400 naming the field, nothing stored', () => {
    it('memory and the other system-instruction fields; the prompt route keeps working', async () => {
      await owner
        .patch('/api/system-instruction')
        .send({ memory: 'Likes tea.', coreInstruction: 'Be brief.' })
        .expect(200);
      const before = (await owner.get('/api/system-instruction').expect(200))
        .body;
      for (const field of [
        'memory',
        'coreInstruction',
        'dbSchema',
        'memoryEnabled',
      ]) {
        const all = await refusesNull(
          'patch',
          '/api/system-instruction',
          { [field]: null },
          field,
        );
        // One line for the null, not every check it failed.
        expect(all).toEqual([`${fieldLabel(field)} must not be null`]);
      }
      // A null next to a good value: nothing of the request is written.
      await refusesNull(
        'patch',
        '/api/system-instruction',
        { coreInstruction: 'Changed.', memory: null },
        'memory',
      );
      expect(
        (await owner.get('/api/system-instruction').expect(200)).body,
      ).toEqual(before);
      const prompt = (
        await owner.get('/api/system-instruction/prompt').expect(200)
      ).body;
      expect(prompt.prompt).toContain('Likes tea.');
    });

    it('settings: timezone, the endpoint list and an endpoint field; null still clears a key', async () => {
      await owner
        .patch('/api/settings')
        .send({ timezone: 'Europe/Paris', geminiApiKey: 'AIzaSyKey-1234' })
        .expect(200);
      const stored = () =>
        db()
          .collection('settings')
          .findOne({ _id: 'app_settings' as never });
      const before = await stored();
      await refusesNull(
        'patch',
        '/api/settings',
        { timezone: null },
        'timezone',
      );
      await refusesNull(
        'patch',
        '/api/settings',
        { openaiCompatible: null },
        'openaiCompatible',
      );
      await refusesNull(
        'patch',
        '/api/settings',
        {
          openaiCompatible: [{ name: 'local', baseUrl: null, apiKey: null }],
        },
        'openaiCompatible.0.baseUrl',
      );
      expect(await stored()).toEqual(before);
      // By the contract, null clears a secret.
      const cleared = await owner
        .patch('/api/settings')
        .send({ geminiApiKey: null })
        .expect(200);
      expect(cleared.body.geminiApiKey).toBeNull();
      expect(cleared.body.timezone).toBe('Europe/Paris');
    });

    it('pulse: notes, pulsesPerDay, activeDays, enabled and a quiet-hours field', async () => {
      await owner
        .patch('/api/pulse')
        .send({ notes: 'Check mail.' })
        .expect(200);
      const before = (await owner.get('/api/pulse').expect(200)).body;
      for (const field of ['notes', 'pulsesPerDay', 'activeDays', 'enabled'])
        await refusesNull('patch', '/api/pulse', { [field]: null }, field);
      await refusesNull(
        'patch',
        '/api/pulse',
        { quietHours: [{ start: null, end: '07:00' }] },
        'quietHours.0.start',
      );
      const after = (await owner.get('/api/pulse').expect(200)).body;
      expect(after.notes).toBe('Check mail.');
      expect(after).toEqual(before);
    });

    it('WhatsApp permissions: displayName, phoneNumber and the switches', async () => {
      for (const field of ['displayName', 'phoneNumber', 'canRead', 'trusted'])
        await refusesNull(
          'post',
          '/api/whatsapp/permissions',
          {
            phoneNumber: '+1 415 555 1234',
            displayName: 'Mom',
            [field]: null,
          },
          field,
        );
      expect(await count('whatsapp_permissions')).toBe(0);
      const created = (
        await owner
          .post('/api/whatsapp/permissions')
          .send({ phoneNumber: '+1 415 555 1234', displayName: 'Mom' })
          .expect(200)
      ).body;
      for (const field of ['displayName', 'canReply'])
        await refusesNull(
          'patch',
          `/api/whatsapp/permissions/${created.id}`,
          { [field]: null },
          field,
        );
      const list = (await owner.get('/api/whatsapp/permissions').expect(200))
        .body;
      expect(list).toEqual([created]);
    });

    it('scheduled jobs: every field on create and edit', async () => {
      const good = {
        name: 'Morning',
        instruction: 'Say hello.',
        cronExpression: '0 8 * * *',
      };
      for (const field of ['name', 'instruction', 'cronExpression', 'enabled'])
        await refusesNull(
          'post',
          '/api/cronjobs',
          { ...good, [field]: null },
          field,
        );
      expect(await count('cronjobs')).toBe(0);
      const job = (await owner.post('/api/cronjobs').send(good).expect(201))
        .body;
      for (const field of ['name', 'instruction', 'cronExpression', 'enabled'])
        await refusesNull(
          'patch',
          `/api/cronjobs/${job.id}`,
          { [field]: null },
          field,
        );
      const after = (await owner.get(`/api/cronjobs/${job.id}`).expect(200))
        .body;
      expect(after).toMatchObject({ ...good, enabled: true });
    });

    it('chats: the title on create and rename, and a message', async () => {
      const chatsBefore = await count('chats');
      await refusesNull('post', '/api/chats', { title: null }, 'title');
      expect(await count('chats')).toBe(chatsBefore);
      const chat = (
        await owner.post('/api/chats').send({ title: 'Kept' }).expect(201)
      ).body;
      await refusesNull(
        'patch',
        `/api/chats/${chat.id}`,
        { title: null },
        'title',
      );
      await refusesNull(
        'post',
        `/api/chats/${chat.id}/messages`,
        { content: null },
        'content',
      );
      await refusesNull(
        'post',
        `/api/chats/${chat.id}/messages`,
        { content: 'Hi', attachmentIds: null },
        'attachmentIds',
      );
      const list = (await owner.get('/api/chats').expect(200)).body as Array<{
        id: string;
        title: string;
      }>;
      expect(list.find((c) => c.id === chat.id)?.title).toBe('Kept');
      expect(await count('messages')).toBe(0);
    });

    it('every non-nullable field of every JSON body the API documents', async () => {
      const doc = (await t.http().get('/api/docs-json').expect(200)).body as {
        paths: Record<
          string,
          Record<
            string,
            {
              requestBody?: {
                content: Record<string, { schema?: { $ref?: string } }>;
              };
            }
          >
        >;
        components: {
          schemas: Record<
            string,
            { properties?: Record<string, { nullable?: boolean }> }
          >;
        };
      };
      const cases: Array<{ method: string; path: string; field: string }> = [];
      const nullable: string[] = [];
      for (const [path, operations] of Object.entries(doc.paths))
        for (const [method, operation] of Object.entries(operations)) {
          const ref =
            operation.requestBody?.content['application/json']?.schema?.$ref;
          if (!ref) continue;
          const schema = doc.components.schemas[ref.split('/').pop() ?? ''];
          for (const [field, property] of Object.entries(
            schema.properties ?? {},
          )) {
            if (property.nullable) nullable.push(`${path} ${field}`);
            else
              cases.push({
                method,
                path: path.replace(/\{[^}]+\}/g, 'aaaaaaaaaaaaaaaaaaaaaaaa'),
                field,
              });
          }
        }
      // Every request body of the API is in the sweep (a route added later joins it by itself).
      expect(cases.length).toBeGreaterThanOrEqual(30);
      // Each of these documents what null means: a chat's model back to the primary one, a key or
      // token removed, the Telegram server back to Telegram's own, the connection test with the stored key,
      // a memory note's expiry removed, an MCP token that never expires.
      expect(nullable.sort()).toEqual([
        '/api/chats/{id} model',
        '/api/mcp/tokens expiresAt',
        '/api/mcp/tokens expiresInDays',
        '/api/memories/{id} expiresAt',
        '/api/settings braveApiKey',
        '/api/settings geminiApiKey',
        '/api/settings imageModel',
        '/api/settings openaiApiKey',
        '/api/settings primaryModel',
        '/api/settings realtimeModel',
        '/api/settings realtimeVoice',
        '/api/settings telegramApiRoot',
        '/api/settings telegramBotToken',
        '/api/settings telegramOwnerChatId',
        '/api/settings/test apiKey',
      ]);
      const failures: string[] = [];
      for (const { method, path, field } of cases) {
        const res = await owner[method as 'post' | 'patch' | 'put'](path).send({
          [field]: null,
        });
        if (
          res.status !== 400 ||
          !messages(res.body).includes(`${fieldLabel(field)} must not be null`)
        )
          failures.push(`${method} ${path} ${field}: ${res.status}`);
      }
      expect(failures).toEqual([]);
    });
  });

  describe('JSON nested deeper than 64 levels', () => {
    const post = (text: string) =>
      owner
        .post('/api/chats')
        .set('Content-Type', 'application/json')
        .send(text);

    it('5,000 levels: 400 with a clear message, nothing stored', async () => {
      const before = await count('chats');
      const res = await post(nestedBody(5000)).expect(400);
      expect(res.body).toEqual({
        statusCode: 400,
        message: JSON_TOO_DEEP_MESSAGE,
        error: 'Bad Request',
      });
      // Objects count as arrays do, and a deep value in any field is refused.
      await post(
        `{"title":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
      ).expect(400);
      await owner
        .patch('/api/settings')
        .set('Content-Type', 'application/json')
        .send(`{"timezone":${'['.repeat(65)}${']'.repeat(65)}}`)
        .expect(400, /nested deeper than 64/);
      expect(await count('chats')).toBe(before);
    });

    it('64 levels pass to the DTO, 65 do not; brackets inside strings do not count', async () => {
      const at64 = await post(nestedBody(64)).expect(400);
      expect(messages(at64.body)).toEqual(['property deep should not exist']);
      const at65 = await post(nestedBody(65)).expect(400);
      expect(at65.body.message).toBe(JSON_TOO_DEEP_MESSAGE);
      const title = '{["\\'.repeat(40);
      const created = await post(JSON.stringify({ title })).expect(201);
      expect(created.body.title).toBe(title);
    });

    it('a query string nested 1,000 levels is a 400, not a 500', async () => {
      const chat = (await owner.post('/api/chats').send({}).expect(201)).body;
      const res = await owner.get(
        `/api/chats/${chat.id}/messages?limit${'[a]'.repeat(1000)}=1`,
      );
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    });
  });
});

import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import type {
  CollectionDocumentsPage,
  CollectionInfo,
} from '@metatronos/shared-types';
import { createTestApp, type TestApp } from './support/test-app';

const GEMINI_KEY = 'AIzaSyFAKE-data-browser-key-0000dg01';
const ENDPOINT_KEY = 'sk-local-FAKE-data-browser-0000de02';

describe('data browser (HTTP, embedded database)', () => {
  let t: TestApp;
  let owner: TestAgent;
  let connection: Connection;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.owner();
    connection = t.app.get<Connection>(getConnectionToken());
    const db = connection.db;
    if (!db) throw new Error('no database');
    await db
      .collection('chats')
      .insertMany([{ title: 'one' }, { title: 'two' }]);
    // Inserted one by one: ObjectIds grow, so `n` grows with _id.
    for (let n = 0; n < 25; n++)
      await db
        .collection('ai_notes')
        .insertOne({ n, at: new Date(Date.UTC(2025, 0, 1 + n)) });
    await db
      .collection('whatsapp_permissions')
      .insertOne({ phoneNumber: '+33600000000', canRead: true });
    await owner
      .patch('/api/settings')
      .send({
        geminiApiKey: GEMINI_KEY,
        openaiCompatible: [
          {
            name: 'ollama',
            baseUrl: 'http://127.0.0.1:11434/v1',
            apiKey: ENDPOINT_KEY,
          },
        ],
      })
      .expect(200);
    await db
      .collection('ai_copied')
      .insertOne({ note: `pasted ${GEMINI_KEY} here` });
  });
  afterAll(() => t.close());

  it.each(['/api/data/collections', '/api/data/collections/chats/documents'])(
    'answers 401 without a session: %s',
    async (path) => {
      const res = await t.http().get(path).expect(401);
      expect(res.body.statusCode).toBe(401);
    },
  );

  it('documents both routes in Swagger under the data tag', async () => {
    const doc = (await t.http().get('/api/docs-json').expect(200)).body as {
      paths: Record<string, Record<string, { tags?: string[] }>>;
    };
    expect(doc.paths['/api/data/collections']?.['get']?.tags).toEqual(['data']);
    expect(
      doc.paths['/api/data/collections/{name}/documents']?.['get']?.tags,
    ).toEqual(['data']);
  });

  describe('GET /api/data/collections', () => {
    it('lists every visible collection by name with counts and AI access, AI-managed ones from day one', async () => {
      const res = await owner.get('/api/data/collections').expect(200);
      const list = res.body as CollectionInfo[];
      const names = list.map((c) => c.name);
      expect(names).toEqual([...names].sort());
      expect(
        names.filter((n) => n.startsWith('auth_') || n.startsWith('system.')),
      ).toEqual([]);
      const byName = new Map(list.map((c) => [c.name, c]));
      expect(byName.get('chats')).toEqual({
        name: 'chats',
        count: 2,
        access: 'read-only',
      });
      expect(byName.get('ai_notes')).toEqual({
        name: 'ai_notes',
        count: 25,
        access: 'read-write',
      });
      expect(byName.get('whatsapp_permissions')).toEqual({
        name: 'whatsapp_permissions',
        count: 1,
        access: 'read-only',
      });
      expect(byName.get('settings')).toMatchObject({ access: 'read-only' });
      for (const name of ['master', 'contacts', 'schedule', 'cronjobs']) {
        expect(byName.get(name)).toEqual({
          name,
          count: expect.any(Number),
          access: 'read-write',
        });
      }
      expect(byName.get('schedule')?.count).toBe(0);
    });
  });

  describe('GET /api/data/collections/:name/documents', () => {
    it('pages newest first with plain JSON ids and dates (default limit 20)', async () => {
      const res = await owner
        .get('/api/data/collections/ai_notes/documents')
        .expect(200);
      const page = res.body as CollectionDocumentsPage;
      expect(page).toMatchObject({
        collection: 'ai_notes',
        access: 'read-write',
        total: 25,
        limit: 20,
        skip: 0,
      });
      expect(page.documents.map((d) => d['n'])).toEqual(
        Array.from({ length: 20 }, (_, i) => 24 - i),
      );
      expect(page.documents[0]).toEqual({
        _id: expect.stringMatching(/^[0-9a-f]{24}$/),
        n: 24,
        at: '2025-01-25T00:00:00.000Z',
      });
    });

    it('honours limit and skip', async () => {
      const res = await owner
        .get('/api/data/collections/ai_notes/documents?limit=10&skip=20')
        .expect(200);
      expect(res.body).toMatchObject({ total: 25, limit: 10, skip: 20 });
      expect(
        (res.body as CollectionDocumentsPage).documents.map((d) => d['n']),
      ).toEqual([4, 3, 2, 1, 0]);
    });

    it('shows an AI-managed collection that does not exist yet as empty', async () => {
      await owner.get('/api/data/collections/schedule/documents').expect(200, {
        collection: 'schedule',
        access: 'read-write',
        total: 0,
        limit: 20,
        skip: 0,
        documents: [],
      });
    });

    it.each(['nope', 'auth_owner', 'auth_sessions', 'system.views'])(
      'answers 404 for an unknown or private collection: %s',
      async (name) => {
        const res = await owner
          .get(`/api/data/collections/${encodeURIComponent(name)}/documents`)
          .expect(404);
        expect(res.body).toEqual({
          statusCode: 404,
          error: 'Not Found',
          message: `Collection '${name}' not found`,
        });
      },
    );

    it.each([
      [
        'a $',
        'a$b',
        "Invalid collection name 'a$b': a collection name must not contain '$'",
      ],
      [
        'a NUL',
        'a\0b',
        "Invalid collection name 'a\0b': a collection name must not contain NUL",
      ],
      [
        '121 characters',
        'x'.repeat(121),
        `Invalid collection name '${'x'.repeat(120)}': a collection name is at most 120 characters`,
      ],
    ])(
      'answers 400 for an impossible name (%s)',
      async (_case, name, message) => {
        const res = await owner
          .get(`/api/data/collections/${encodeURIComponent(name)}/documents`)
          .expect(400);
        expect(res.body).toEqual({
          statusCode: 400,
          error: 'Bad Request',
          message,
        });
      },
    );

    it.each([
      ['limit=0', 'limit must not be less than 1'],
      ['limit=101', 'limit must not be greater than 100'],
      ['limit=abc', 'limit must be an integer number'],
      ['limit=2.5', 'limit must be an integer number'],
      ['skip=-1', 'skip must not be less than 0'],
      ['skip=1000001', 'skip must not be greater than 1000000'],
      ['sort=name', 'property sort should not exist'],
    ])('answers 400 for ?%s', async (query, message) => {
      const res = await owner
        .get(`/api/data/collections/ai_notes/documents?${query}`)
        .expect(400);
      expect(res.body).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: expect.arrayContaining([message]),
      });
    });

    it('masks the secrets of settings as the AI sees them', async () => {
      const res = await owner
        .get('/api/data/collections/settings/documents')
        .expect(200);
      expect(res.body).toMatchObject({
        collection: 'settings',
        access: 'read-only',
      });
      expect(res.text).not.toContain(GEMINI_KEY);
      expect(res.text).not.toContain(ENDPOINT_KEY);
      const settings = (res.body as CollectionDocumentsPage).documents.find(
        (d) => d['_id'] === 'app_settings',
      );
      expect(settings).toMatchObject({
        geminiApiKey: '••••dg01',
        openaiCompatible: [
          {
            name: 'ollama',
            baseUrl: 'http://127.0.0.1:11434/v1',
            apiKey: '••••de02',
          },
        ],
      });
    });

    it('masks a current key found in any other collection', async () => {
      const res = await owner
        .get('/api/data/collections/ai_copied/documents')
        .expect(200);
      expect(res.text).not.toContain(GEMINI_KEY);
      expect((res.body as CollectionDocumentsPage).documents[0]['note']).toBe(
        'pasted ••••dg01 here',
      );
    });
  });
});

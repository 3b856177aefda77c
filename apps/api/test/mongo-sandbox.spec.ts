import { Test, type TestingModule } from '@nestjs/testing';
import { MongooseModule, getConnectionToken } from '@nestjs/mongoose';
import mongoose, { type Connection } from 'mongoose';
import { randomBytes } from 'node:crypto';
import {
  MAX_RESULT_DOCUMENTS,
  MongoSandboxService,
} from '../src/mongo-sandbox/mongo-sandbox.service';
import { RESULT_BYTE_CAP } from '../src/mongo-sandbox/result-redactor';
import { SandboxSecrets } from '../src/mongo-sandbox/sandbox-secrets';
import type { MongoClient } from 'mongodb';
import {
  stopUsingEmbeddedWire,
  useEmbeddedWire,
} from '../src/database/driver-collection';
import {
  EmbeddedWire,
  embeddedWireAddress,
} from '../src/database/embedded-wire';
import { TEST_MONGODB_URI_ENV } from './support/test-database';

const { ObjectId, EJSON } = mongoose.mongo.BSON;

const GEMINI_KEY = 'AIzaSyFAKE-gemini-key-0000000000gk01';
const OPENAI_KEY = 'sk-proj-FAKE-openai-key-00000000ok02';
const BRAVE_KEY = 'BSA-FAKE-brave-key-000000000000bk03';
const LOCAL_KEY = 'sk-local-FAKE-endpoint-key-0000lk04';
const SECRETS = [GEMINI_KEY, OPENAI_KEY, BRAVE_KEY, LOCAL_KEY];

/** SettingsModule provides the real one; here the secrets are fixed. */
class FixedSecrets extends SandboxSecrets {
  async currentSecrets(): Promise<string[]> {
    return SECRETS;
  }
}

/** Collections the AI must never change (or, for auth_*, even see). */
const GUARDED = [
  'chats',
  'messages',
  'settings',
  'media',
  'attachments',
  'auth_owner',
  'auth_sessions',
  'notes',
  'whatsapp_permissions',
  'ai_x',
];

const PROTECTED_PREFIX = (name: string) =>
  `Access denied: '${name}' is a protected core collection`;
const NOT_WRITABLE =
  "Write operations are restricted to AI-managed collections (master, contacts, schedule, cronjobs) or collections with the 'ai_' prefix";
const UNKNOWN_OPERATION = (name: string) =>
  `Operation '${name}' is not allowed. Allowed operations: find, findOne,`;
const JS = 'Server-side JavaScript is not allowed';
const WRITING_STAGE = (stage: string) =>
  `Aggregation stage '${stage}' is not allowed: pipelines may only read`;
const STAGE = (stage: string) =>
  `Aggregation stage '${stage}' is not allowed. Allowed stages:`;
const HIDDEN = (name: string) =>
  `Access denied: '${name}' is a private system collection`;
const INVALID_NAME = 'Invalid collection name';
const SECRET =
  "Access denied: secret fields of 'settings' cannot be queried, sorted, grouped or projected";
const INTO_SETTINGS = (stage: string) =>
  `Access denied: '${stage}' cannot read 'settings': it holds secrets`;

/**
 * Twice: reading through the driver (a `MONGODB_URI` server) and through the embedded wire (the
 * embedded database, where `find` and `findOne` take it): the same answers either way.
 */
describe.each(['driver', 'wire'] as const)(
  'MongoSandboxService on the embedded database (reads through the %s)',
  (way) => {
    let moduleRef: TestingModule;
    let sandbox: MongoSandboxService;
    let db: mongoose.mongo.Db;
    let client: MongoClient | undefined;
    let wire: EmbeddedWire | undefined;
    const dbName = `test_sandbox_${randomBytes(6).toString('hex')}`;

    beforeAll(async () => {
      const uri = process.env[TEST_MONGODB_URI_ENV];
      if (!uri)
        throw new Error(
          `${TEST_MONGODB_URI_ENV} is not set: is the Jest globalSetup configured?`,
        );
      moduleRef = await Test.createTestingModule({
        imports: [
          MongooseModule.forRoot(uri, {
            dbName,
            bufferCommands: false,
            autoIndex: false,
          }),
        ],
        // The service alone, with fixed secrets instead of SettingsModule's (which reads the settings document).
        providers: [
          MongoSandboxService,
          { provide: SandboxSecrets, useClass: FixedSecrets },
        ],
      }).compile();
      await moduleRef.init();
      sandbox = moduleRef.get(MongoSandboxService);
      const connection = moduleRef.get<Connection>(getConnectionToken());
      db = connection.db as mongoose.mongo.Db;
      if (way === 'wire') {
        const address = embeddedWireAddress(uri);
        if (!address) throw new Error('the test database has no wire address');
        wire = new EmbeddedWire(address);
        client = connection.getClient() as unknown as MongoClient;
        useEmbeddedWire(client, wire);
      }

      const chatId = new ObjectId();
      await db.collection('chats').insertMany([
        {
          _id: chatId,
          title: 'Trip to Lisbon',
          createdAt: new Date('2025-01-02T10:00:00Z'),
        },
        { title: 'Groceries', createdAt: new Date('2025-01-03T10:00:00Z') },
      ]);
      await db.collection('messages').insertMany(
        Array.from({ length: 5 }, (_, i) => ({
          chatId,
          role: i % 2 ? 'assistant' : 'user',
          content: `message ${i}`,
          createdAt: new Date(Date.UTC(2025, 0, 2, 10, i)),
        })),
      );
      await db.collection('settings').insertMany([
        {
          _id: 'app_settings' as never,
          geminiApiKey: GEMINI_KEY,
          openaiApiKey: OPENAI_KEY,
          braveApiKey: BRAVE_KEY,
          openaiCompatible: [
            {
              name: 'ollama',
              baseUrl: 'http://127.0.0.1:11434/v1',
              apiKey: LOCAL_KEY,
            },
          ],
          primaryModel: 'gemini-2.5-flash',
          timezone: 'Europe/Paris',
        },
        {
          _id: 'system_instruction' as never,
          memory: 'The owner likes green tea.',
          memoryEnabled: true,
        },
      ]);
      await db.collection('media').insertOne({
        kind: 'image',
        path: 'media/a.png',
        createdAt: new Date(),
      });
      await db
        .collection('attachments')
        .insertOne({ name: 'scan.pdf', mime: 'application/pdf', size: 1234 });
      await db
        .collection('auth_owner')
        .insertOne({ _id: 'owner' as never, passwordHash: 'scrypt$fake' });
      await db
        .collection('auth_sessions')
        .insertOne({ _id: 'abc' as never, expiresAt: new Date() });
      await db.collection('notes').insertOne({ text: 'not an AI collection' });
      await db.collection('whatsapp_permissions').insertOne({
        phoneNumber: '+33600000000',
        canRead: true,
        canReply: false,
      });
      await db.collection('ai_x').insertMany([{ a: 1 }, { a: 2 }]);
    });

    afterAll(async () => {
      if (client) stopUsingEmbeddedWire(client);
      wire?.close();
      await db?.dropDatabase().catch(() => undefined);
      await moduleRef?.close();
    });

    /** Every guarded collection's documents and indexes, in canonical Extended JSON, plus the list of collections. */
    async function snapshot(): Promise<string> {
      const parts: unknown[] = [
        (await db.listCollections({}, { nameOnly: true }).toArray())
          .map((c) => c.name)
          .sort(),
      ];
      for (const name of GUARDED) {
        parts.push(
          name,
          await db.collection(name).find().sort({ _id: 1 }).toArray(),
          await db.collection(name).indexes(),
        );
      }
      return EJSON.stringify(parts, { relaxed: false });
    }

    it('reads (find, findOne, countDocuments, aggregate) through the wire when there is one', async () => {
      const sent = wire && jest.spyOn(wire, 'command');
      const found = await sandbox.execute({
        operation: 'find',
        collection: 'chats',
        filter: { title: 'Groceries' },
        options: { projection: { title: 1, _id: 0 } },
      });
      expect(found).toEqual({ rows: [{ title: 'Groceries' }] });
      const one = await sandbox.execute({
        operation: 'findOne',
        collection: 'chats',
        filter: {},
        options: { sort: { createdAt: -1 }, projection: { title: 1, _id: 0 } },
      });
      expect(one).toEqual({ row: { title: 'Groceries' } });
      expect(
        await sandbox.execute({
          operation: 'countDocuments',
          collection: 'chats',
          filter: {},
        }),
      ).toEqual({ count: 2 });
      expect(
        await sandbox.execute({
          operation: 'aggregate',
          collection: 'chats',
          pipeline: [
            { $match: { title: 'Groceries' } },
            { $project: { _id: 0, title: 1 } },
          ],
        }),
      ).toEqual({ rows: [{ title: 'Groceries' }] });
      if (sent) {
        expect(
          sent.mock.calls.map(([, command]) => Object.keys(command)[0]),
        ).toEqual(['find', 'find', 'aggregate', 'aggregate']);
        sent.mockRestore();
      }
    });

    describe('refused operations', () => {
      const thousandAndOne = Array.from({ length: 1001 }, (_, i) => ({ i }));
      const refused: Array<[string, Record<string, unknown>, string]> = [
        // The seed's two examples.
        [
          'seed: insert into chats',
          { operation: 'insertOne', collection: 'chats', data: { title: 'x' } },
          PROTECTED_PREFIX('chats'),
        ],
        [
          'seed: insert into notes',
          { operation: 'insertOne', collection: 'notes', data: { title: 'x' } },
          NOT_WRITABLE,
        ],
        // Writes to each protected collection.
        [
          'update messages',
          {
            operation: 'updateOne',
            collection: 'messages',
            filter: {},
            update: { $set: { content: 'hacked' } },
          },
          PROTECTED_PREFIX('messages'),
        ],
        [
          'delete settings',
          { operation: 'deleteMany', collection: 'settings', filter: {} },
          PROTECTED_PREFIX('settings'),
        ],
        [
          'insertMany into media',
          { operation: 'insertMany', collection: 'media', data: [{ a: 1 }] },
          PROTECTED_PREFIX('media'),
        ],
        [
          'delete an attachment',
          { operation: 'deleteOne', collection: 'attachments', filter: {} },
          PROTECTED_PREFIX('attachments'),
        ],
        [
          'updateMany chats with upsert',
          {
            operation: 'updateMany',
            collection: 'chats',
            filter: { nope: 1 },
            update: { $set: { a: 1 } },
            options: { upsert: true },
          },
          PROTECTED_PREFIX('chats'),
        ],
        [
          'TTL index on chats',
          {
            operation: 'createIndex',
            collection: 'chats',
            keys: { createdAt: 1 },
            options: { expireAfterSeconds: 1 },
          },
          PROTECTED_PREFIX('chats'),
        ],
        [
          'unique index on messages',
          {
            operation: 'createIndex',
            collection: 'messages',
            keys: { content: 1 },
            options: { unique: true },
          },
          PROTECTED_PREFIX('messages'),
        ],
        [
          'create settings',
          { operation: 'createCollection', collection: 'settings' },
          PROTECTED_PREFIX('settings'),
        ],
        // Writes to collections that are neither AI-managed nor ai_*.
        [
          'update whatsapp_permissions',
          {
            operation: 'updateOne',
            collection: 'whatsapp_permissions',
            filter: {},
            update: { $set: { canReply: true } },
          },
          NOT_WRITABLE,
        ],
        [
          'delete notes',
          { operation: 'deleteMany', collection: 'notes', filter: {} },
          NOT_WRITABLE,
        ],
        [
          'create a non-ai collection',
          { operation: 'createCollection', collection: 'notes2' },
          NOT_WRITABLE,
        ],
        [
          'index a non-ai collection',
          { operation: 'createIndex', collection: 'notes', keys: { text: 1 } },
          NOT_WRITABLE,
        ],
        // Operations outside the whitelist.
        [
          'drop',
          { operation: 'drop', collection: 'ai_x' },
          UNKNOWN_OPERATION('drop'),
        ],
        [
          'renameCollection',
          {
            operation: 'renameCollection',
            collection: 'chats',
            to: 'ai_chats',
          },
          UNKNOWN_OPERATION('renameCollection'),
        ],
        [
          'mapReduce',
          { operation: 'mapReduce', collection: 'chats' },
          UNKNOWN_OPERATION('mapReduce'),
        ],
        // Server-side JavaScript at several depths.
        [
          '$where at the top',
          {
            operation: 'find',
            collection: 'chats',
            filter: { $where: 'sleep(5000) || true' },
          },
          JS,
        ],
        [
          '$where under $or',
          {
            operation: 'find',
            collection: 'messages',
            filter: { $or: [{ role: 'user' }, { $where: 'true' }] },
          },
          JS,
        ],
        [
          '$function in $expr',
          {
            operation: 'countDocuments',
            collection: 'chats',
            filter: {
              $expr: {
                $function: {
                  body: 'function() { return true }',
                  args: [],
                  lang: 'js',
                },
              },
            },
          },
          JS,
        ],
        [
          '$accumulator in $group',
          {
            operation: 'aggregate',
            collection: 'messages',
            pipeline: [
              {
                $group: {
                  _id: null,
                  all: { $accumulator: { init: 'function() {}', lang: 'js' } },
                },
              },
            ],
          },
          JS,
        ],
        [
          '$function in a $facet',
          {
            operation: 'aggregate',
            collection: 'ai_x',
            pipeline: [
              {
                $facet: {
                  a: [
                    {
                      $addFields: {
                        b: {
                          $function: { body: 'return 1', args: [], lang: 'js' },
                        },
                      },
                    },
                  ],
                },
              },
            ],
          },
          JS,
        ],
        [
          '$function in an update pipeline',
          {
            operation: 'updateMany',
            collection: 'ai_x',
            filter: {},
            update: [
              {
                $set: {
                  b: { $function: { body: 'return 1', args: [], lang: 'js' } },
                },
              },
            ],
          },
          JS,
        ],
        [
          '$where in a partial index',
          {
            operation: 'createIndex',
            collection: 'ai_x',
            keys: { a: 1 },
            options: { partialFilterExpression: { $where: 'true' } },
          },
          JS,
        ],
        // Stages that write.
        [
          '$out to an ai_ collection',
          {
            operation: 'aggregate',
            collection: 'chats',
            pipeline: [{ $match: {} }, { $out: 'ai_copy' }],
          },
          WRITING_STAGE('$out'),
        ],
        [
          '$merge into an ai_ collection',
          {
            operation: 'aggregate',
            collection: 'messages',
            pipeline: [{ $merge: { into: 'ai_copy' } }],
          },
          WRITING_STAGE('$merge'),
        ],
        [
          '$out inside $facet',
          {
            operation: 'aggregate',
            collection: 'chats',
            pipeline: [{ $facet: { a: [{ $out: 'ai_copy' }] } }],
          },
          WRITING_STAGE('$out'),
        ],
        [
          '$merge in a $lookup pipeline',
          {
            operation: 'aggregate',
            collection: 'ai_x',
            pipeline: [
              {
                $lookup: {
                  from: 'chats',
                  as: 'c',
                  pipeline: [{ $merge: 'ai_copy' }],
                },
              },
            ],
          },
          WRITING_STAGE('$merge'),
        ],
        // Stages outside the allowlist.
        [
          '$currentOp',
          {
            operation: 'aggregate',
            collection: 'chats',
            pipeline: [{ $currentOp: { allUsers: true } }],
          },
          STAGE('$currentOp'),
        ],
        [
          '$collStats',
          {
            operation: 'aggregate',
            collection: 'chats',
            pipeline: [{ $collStats: { count: {} } }],
          },
          STAGE('$collStats'),
        ],
        [
          '$indexStats',
          {
            operation: 'aggregate',
            collection: 'chats',
            pipeline: [{ $indexStats: {} }],
          },
          STAGE('$indexStats'),
        ],
        [
          '$listSessions',
          {
            operation: 'aggregate',
            collection: 'chats',
            pipeline: [{ $listSessions: {} }],
          },
          STAGE('$listSessions'),
        ],
        [
          '$planCacheStats',
          {
            operation: 'aggregate',
            collection: 'chats',
            pipeline: [{ $planCacheStats: {} }],
          },
          STAGE('$planCacheStats'),
        ],
        [
          '$documents',
          {
            operation: 'aggregate',
            collection: 'chats',
            pipeline: [{ $documents: [{ a: 1 }] }],
          },
          STAGE('$documents'),
        ],
        [
          '$changeStream',
          {
            operation: 'aggregate',
            collection: 'chats',
            pipeline: [{ $changeStream: {} }],
          },
          STAGE('$changeStream'),
        ],
        // Other databases and invalid names.
        [
          'admin.system.users',
          { operation: 'find', collection: 'admin.system.users' },
          INVALID_NAME,
        ],
        [
          'system.users',
          { operation: 'find', collection: 'system.users' },
          INVALID_NAME,
        ],
        [
          'system.js',
          {
            operation: 'insertOne',
            collection: 'system.js',
            data: { _id: 'f', value: 'x' },
          },
          INVALID_NAME,
        ],
        [
          'a $ in the name',
          { operation: 'find', collection: 'chats$cmd' },
          INVALID_NAME,
        ],
        ['an empty name', { operation: 'find', collection: '' }, INVALID_NAME],
        [
          'a $lookup into another database',
          {
            operation: 'aggregate',
            collection: 'chats',
            pipeline: [
              {
                $lookup: {
                  from: { db: 'admin', coll: 'system.users' },
                  as: 'u',
                  pipeline: [],
                },
              },
            ],
          },
          "'$lookup.from' must be a collection name in this database",
        ],
        [
          'a $unionWith with a dotted name',
          {
            operation: 'aggregate',
            collection: 'chats',
            pipeline: [{ $unionWith: 'other.chats' }],
          },
          INVALID_NAME,
        ],
        // Credentials are invisible.
        [
          'find auth_owner',
          { operation: 'find', collection: 'auth_owner' },
          HIDDEN('auth_owner'),
        ],
        [
          'count auth_sessions',
          { operation: 'countDocuments', collection: 'auth_sessions' },
          HIDDEN('auth_sessions'),
        ],
        [
          'delete auth_sessions',
          { operation: 'deleteMany', collection: 'auth_sessions', filter: {} },
          HIDDEN('auth_sessions'),
        ],
        [
          '$lookup auth_owner',
          {
            operation: 'aggregate',
            collection: 'chats',
            pipeline: [
              {
                $lookup: {
                  from: 'auth_owner',
                  localField: 'x',
                  foreignField: '_id',
                  as: 'o',
                },
              },
            ],
          },
          HIDDEN('auth_owner'),
        ],
        [
          '$unionWith auth_sessions',
          {
            operation: 'aggregate',
            collection: 'chats',
            pipeline: [{ $unionWith: { coll: 'auth_sessions' } }],
          },
          HIDDEN('auth_sessions'),
        ],
        // Probing the secrets of settings.
        [
          '$regex on geminiApiKey',
          {
            operation: 'find',
            collection: 'settings',
            filter: { geminiApiKey: { $regex: '^AIza' } },
          },
          SECRET,
        ],
        [
          'equality on geminiApiKey',
          {
            operation: 'countDocuments',
            collection: 'settings',
            filter: { geminiApiKey: GEMINI_KEY },
          },
          SECRET,
        ],
        [
          'a projection of openaiApiKey',
          {
            operation: 'findOne',
            collection: 'settings',
            options: { projection: { openaiApiKey: 1 } },
          },
          SECRET,
        ],
        [
          'a sort on openaiApiKey',
          {
            operation: 'find',
            collection: 'settings',
            options: { sort: { openaiApiKey: 1 } },
          },
          SECRET,
        ],
        [
          '$group on $geminiApiKey',
          {
            operation: 'aggregate',
            collection: 'settings',
            pipeline: [{ $group: { _id: '$geminiApiKey', n: { $sum: 1 } } }],
          },
          SECRET,
        ],
        [
          '$match on an endpoint key',
          {
            operation: 'aggregate',
            collection: 'settings',
            pipeline: [
              { $match: { 'openaiCompatible.apiKey': { $regex: '^sk' } } },
            ],
          },
          SECRET,
        ],
        [
          '$substrCP of braveApiKey',
          {
            operation: 'aggregate',
            collection: 'settings',
            pipeline: [
              { $project: { c: { $substrCP: ['$braveApiKey', 0, 1] } } },
            ],
          },
          SECRET,
        ],
        [
          '$objectToArray of the document',
          {
            operation: 'aggregate',
            collection: 'settings',
            pipeline: [{ $project: { kv: { $objectToArray: '$$ROOT' } } }],
          },
          "Access denied: '$objectToArray' cannot be used on 'settings'",
        ],
        [
          '$unionWith from settings',
          {
            operation: 'aggregate',
            collection: 'settings',
            pipeline: [{ $unionWith: 'ai_x' }],
          },
          "Access denied: '$unionWith' cannot be used in a pipeline on 'settings'",
        ],
        [
          '$lookup into settings',
          {
            operation: 'aggregate',
            collection: 'chats',
            pipeline: [
              {
                $lookup: {
                  from: 'settings',
                  localField: 'x',
                  foreignField: '_id',
                  as: 's',
                },
              },
            ],
          },
          INTO_SETTINGS('$lookup'),
        ],
        [
          '$unionWith into settings',
          {
            operation: 'aggregate',
            collection: 'ai_x',
            pipeline: [{ $unionWith: 'settings' }],
          },
          INTO_SETTINGS('$unionWith'),
        ],
        [
          '$graphLookup into settings',
          {
            operation: 'aggregate',
            collection: 'messages',
            pipeline: [
              {
                $graphLookup: {
                  from: 'settings',
                  startWith: '$x',
                  connectFromField: 'a',
                  connectToField: 'b',
                  as: 'g',
                },
              },
            ],
          },
          INTO_SETTINGS('$graphLookup'),
        ],
        // Bad types.
        [
          'a string filter',
          { operation: 'find', collection: 'chats', filter: 'title = x' },
          "'filter' must be an object",
        ],
        [
          'a pipeline that is not an array',
          {
            operation: 'aggregate',
            collection: 'chats',
            pipeline: { $match: {} },
          },
          "'pipeline' must be an array of stages",
        ],
        [
          'insertMany with one object',
          { operation: 'insertMany', collection: 'ai_x', data: { a: 3 } },
          "'data' must be an array of 1 to 1000 documents",
        ],
        [
          'insertMany with 1001 documents',
          { operation: 'insertMany', collection: 'ai_x', data: thousandAndOne },
          "'data' must be an array of 1 to 1000 documents",
        ],
        [
          'insertOne with an array',
          { operation: 'insertOne', collection: 'ai_x', data: [{ a: 3 }] },
          "'data' must be a single document for insertOne",
        ],
        [
          'a negative limit',
          { operation: 'find', collection: 'chats', options: { limit: -5 } },
          "'options.limit' must be a positive integer",
        ],
        [
          'a replacement update',
          {
            operation: 'updateOne',
            collection: 'ai_x',
            filter: {},
            update: { a: 99 },
          },
          "'update' must use update operators such as $set",
        ],
        [
          'a numeric collection',
          { operation: 'find', collection: 42 },
          INVALID_NAME,
        ],
        [
          'a view over chats',
          {
            operation: 'createCollection',
            collection: 'ai_view',
            options: { viewOn: 'chats', pipeline: [] },
          },
          "'options.viewOn' is not accepted by createCollection",
        ],
        [
          'deleteMany without a filter',
          { operation: 'deleteMany', collection: 'ai_x' },
          "deleteMany needs a 'filter' object",
        ],
      ];

      let before: string;
      beforeAll(async () => {
        before = await snapshot();
      });

      it('has a corpus of at least 40 cases', () => {
        expect(refused.length).toBeGreaterThanOrEqual(40);
      });

      it.each(refused)('refuses %s', async (_case, op, prefix) => {
        const result = await sandbox.execute(op);
        expect(Object.keys(result)).toEqual(['error']);
        expect(String(result['error']).slice(0, prefix.length)).toBe(prefix);
      });

      it('left every guarded collection byte-for-byte unchanged, and created nothing', async () => {
        expect(await snapshot()).toBe(before);
        expect(await db.listCollections({ name: 'ai_copy' }).toArray()).toEqual(
          [],
        );
      });
    });

    describe('allowed operations answer with the seed shapes', () => {
      let contactId: string;

      it('insertOne → { insertedId } as a hex string', async () => {
        const result = await sandbox.execute({
          operation: 'insertOne',
          collection: 'contacts',
          data: {
            name: 'Ana Souza',
            phones: ['+351910000000'],
            birthday: '1990-04-12',
            createdAt: { $date: '2025-01-31T09:00:00Z' },
          },
        });
        expect(result).toEqual({
          insertedId: expect.stringMatching(/^[0-9a-f]{24}$/),
        });
        contactId = result['insertedId'] as string;
        const stored = await db
          .collection('contacts')
          .findOne({ _id: new ObjectId(contactId) });
        expect(stored?.['createdAt']).toEqual(new Date('2025-01-31T09:00:00Z'));
      });

      it('insertMany → { insertedCount }', async () => {
        const result = await sandbox.execute({
          operation: 'insertMany',
          collection: 'ai_notes',
          data: [
            { title: 'a', n: 1 },
            { title: 'b', n: 2 },
            { title: 'c', n: 3, topic: 'x' },
          ],
        });
        expect(result).toEqual({ insertedCount: 3 });
      });

      it('find by {"$oid"} → { rows } with ids and dates as strings', async () => {
        const result = await sandbox.execute({
          operation: 'find',
          collection: 'contacts',
          filter: { _id: { $oid: contactId } },
        });
        expect(result).toEqual({
          rows: [
            {
              _id: contactId,
              name: 'Ana Souza',
              phones: ['+351910000000'],
              birthday: '1990-04-12',
              createdAt: '2025-01-31T09:00:00.000Z',
            },
          ],
        });
      });

      it('find with projection, sort, skip and limit', async () => {
        const result = await sandbox.execute({
          operation: 'find',
          collection: 'ai_notes',
          filter: { n: { $gte: 1 } },
          options: {
            projection: { _id: 0, title: 1 },
            sort: { n: -1 },
            skip: 1,
            limit: 1,
          },
        });
        expect(result).toEqual({ rows: [{ title: 'b' }] });
      });

      it('findOne → { row }, or { row: null }', async () => {
        expect(
          await sandbox.execute({
            operation: 'findOne',
            collection: 'ai_notes',
            filter: { title: 'c' },
            options: { projection: { _id: 0 } },
          }),
        ).toEqual({
          row: { title: 'c', n: 3, topic: 'x' },
        });
        expect(
          await sandbox.execute({
            operation: 'findOne',
            collection: 'ai_notes',
            filter: { title: 'zzz' },
          }),
        ).toEqual({ row: null });
      });

      it('updateOne by {"$oid"} → { matchedCount, modifiedCount }', async () => {
        const result = await sandbox.execute({
          operation: 'updateOne',
          collection: 'contacts',
          filter: { _id: { $oid: contactId } },
          update: {
            $set: {
              relationship: 'friend',
              lastContactAt: { $date: '2025-02-01T12:00:00Z' },
            },
          },
        });
        expect(result).toEqual({ matchedCount: 1, modifiedCount: 1 });
        const row = await sandbox.execute({
          operation: 'findOne',
          collection: 'contacts',
          filter: { _id: { $oid: contactId } },
          options: { projection: { lastContactAt: 1 } },
        });
        expect(row).toEqual({
          row: { _id: contactId, lastContactAt: '2025-02-01T12:00:00.000Z' },
        });
      });

      it('updateOne with upsert → adds upsertedId', async () => {
        const result = await sandbox.execute({
          operation: 'updateOne',
          collection: 'master',
          filter: {},
          update: { $set: { name: 'Jo', city: 'Paris' } },
          options: { upsert: true },
        });
        expect(result).toEqual({
          matchedCount: 0,
          modifiedCount: 0,
          upsertedId: expect.stringMatching(/^[0-9a-f]{24}$/),
        });
        expect(
          await sandbox.execute({
            operation: 'updateOne',
            collection: 'master',
            filter: {},
            update: { $set: { city: 'Lyon' } },
            options: { upsert: true },
          }),
        ).toEqual({
          matchedCount: 1,
          modifiedCount: 1,
        });
      });

      it('updateMany → { matchedCount, modifiedCount }', async () => {
        expect(
          await sandbox.execute({
            operation: 'updateMany',
            collection: 'ai_notes',
            filter: {},
            update: { $inc: { n: 10 } },
          }),
        ).toEqual({
          matchedCount: 3,
          modifiedCount: 3,
        });
      });

      it('countDocuments → { count }', async () => {
        expect(
          await sandbox.execute({
            operation: 'countDocuments',
            collection: 'ai_notes',
            filter: { n: { $gt: 11 } },
          }),
        ).toEqual({ count: 2 });
        expect(
          await sandbox.execute({
            operation: 'countDocuments',
            collection: 'messages',
          }),
        ).toEqual({ count: 5 });
      });

      it('aggregate with a single-accumulator $group → { rows }', async () => {
        const result = await sandbox.execute({
          operation: 'aggregate',
          collection: 'messages',
          pipeline: [
            { $group: { _id: '$role', n: { $sum: 1 } } },
            { $sort: { _id: 1 } },
          ],
        });
        expect(result).toEqual({
          rows: [
            { _id: 'assistant', n: 2 },
            { _id: 'user', n: 3 },
          ],
        });
      });

      it('deleteOne / deleteMany → { deletedCount }', async () => {
        expect(
          await sandbox.execute({
            operation: 'deleteOne',
            collection: 'ai_notes',
            filter: { title: 'a' },
          }),
        ).toEqual({ deletedCount: 1 });
        expect(
          await sandbox.execute({
            operation: 'deleteMany',
            collection: 'ai_notes',
            filter: {},
          }),
        ).toEqual({ deletedCount: 2 });
      });

      it('createCollection → { success: true }, and the driver error when it exists', async () => {
        expect(
          await sandbox.execute({
            operation: 'createCollection',
            collection: 'ai_books',
          }),
        ).toEqual({ success: true });
        const again = await sandbox.execute({
          operation: 'createCollection',
          collection: 'ai_books',
        });
        expect(Object.keys(again)).toEqual(['error']);
        expect(again['error']).toMatch(/already exists/);
      });

      it('createIndex → { success: true } and the index exists', async () => {
        expect(
          await sandbox.execute({
            operation: 'createIndex',
            collection: 'ai_books',
            keys: { title: 1 },
            options: { name: 'by_title', unique: true },
          }),
        ).toEqual({
          success: true,
        });
        const indexes = await db.collection('ai_books').indexes();
        expect(indexes.find((i) => i.name === 'by_title')).toMatchObject({
          key: { title: 1 },
          unique: true,
        });
      });

      it('listCollections → { collections } sorted, without auth_*', async () => {
        const result = await sandbox.execute({
          operation: 'listCollections',
          collection: '',
        });
        const names = result['collections'] as string[];
        expect(names).toEqual([...names].sort());
        expect(names).toEqual(
          expect.arrayContaining([
            'chats',
            'messages',
            'settings',
            'contacts',
            'master',
            'ai_books',
            'ai_x',
          ]),
        );
        expect(names.filter((n) => n.startsWith('auth_'))).toEqual([]);
      });

      it('reads protected collections', async () => {
        const chats = await sandbox.execute({
          operation: 'find',
          collection: 'chats',
          options: { sort: { createdAt: 1 }, projection: { _id: 0, title: 1 } },
        });
        expect(chats).toEqual({
          rows: [{ title: 'Trip to Lisbon' }, { title: 'Groceries' }],
        });
      });

      it('turns a driver failure into { error } without a stack', async () => {
        const result = await sandbox.execute({
          operation: 'find',
          collection: 'ai_x',
          filter: { a: { $nope: 1 } },
        });
        expect(Object.keys(result)).toEqual(['error']);
        expect(result['error']).toMatch(/\$nope/);
        expect(result['error']).not.toMatch(/\n\s+at /);
      });
    });

    describe('caps', () => {
      beforeAll(async () => {
        await db
          .collection('ai_many')
          .insertMany(Array.from({ length: 150 }, (_, i) => ({ i })));
        // 5 documents of ~100 KiB: only two fit in 256 KiB.
        await db.collection('ai_big').insertMany(
          Array.from({ length: 5 }, (_, i) => ({
            i,
            text: String(i).repeat(100 * 1024),
          })),
        );
      });

      it(`returns at most ${MAX_RESULT_DOCUMENTS} documents, even when asked for more`, async () => {
        expect(
          (await sandbox.execute({ operation: 'find', collection: 'ai_many' }))[
            'rows'
          ],
        ).toHaveLength(100);
        expect(
          (
            await sandbox.execute({
              operation: 'find',
              collection: 'ai_many',
              options: { limit: 500 },
            })
          )['rows'],
        ).toHaveLength(100);
        expect(
          (
            await sandbox.execute({
              operation: 'find',
              collection: 'ai_many',
              options: { limit: 7 },
            })
          )['rows'],
        ).toHaveLength(7);
        expect(
          (
            await sandbox.execute({
              operation: 'aggregate',
              collection: 'ai_many',
              pipeline: [{ $match: {} }],
            })
          )['rows'],
        ).toHaveLength(100);
        expect(
          (
            await sandbox.execute({
              operation: 'aggregate',
              collection: 'ai_many',
              pipeline: [],
              options: { limit: 3 },
            })
          )['rows'],
        ).toHaveLength(3);
        expect(
          await sandbox.execute({
            operation: 'countDocuments',
            collection: 'ai_many',
          }),
        ).toEqual({ count: 150 });
      });

      it('drops rows from the end past 256 KiB and says how to narrow the query', async () => {
        const result = await sandbox.execute({
          operation: 'find',
          collection: 'ai_big',
          options: { sort: { i: 1 } },
        });
        const rows = result['rows'] as Array<{ i: number }>;
        expect(rows.map((r) => r.i)).toEqual([0, 1]);
        expect(result['truncated']).toBe(true);
        expect(result['note']).toMatch(
          /^Only 2 of 5 documents fit in 256 KiB\. Narrow the query: a projection/,
        );
        expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(
          RESULT_BYTE_CAP,
        );
        // A projection makes them all fit.
        const narrow = await sandbox.execute({
          operation: 'find',
          collection: 'ai_big',
          options: { projection: { text: 0 } },
        });
        expect(narrow['rows']).toHaveLength(5);
        expect(narrow['truncated']).toBeUndefined();
      });
    });

    describe('secret redaction', () => {
      it('shows the keys of settings masked, other fields in clear', async () => {
        const result = await sandbox.execute({
          operation: 'findOne',
          collection: 'settings',
          filter: { _id: 'app_settings' },
        });
        expect(result).toEqual({
          row: {
            _id: 'app_settings',
            geminiApiKey: '••••gk01',
            openaiApiKey: '••••ok02',
            braveApiKey: '••••bk03',
            openaiCompatible: [
              {
                name: 'ollama',
                baseUrl: 'http://127.0.0.1:11434/v1',
                apiKey: '••••lk04',
              },
            ],
            primaryModel: 'gemini-2.5-flash',
            timezone: 'Europe/Paris',
          },
        });
      });

      it('masks them in aggregation results too', async () => {
        const result = await sandbox.execute({
          operation: 'aggregate',
          collection: 'settings',
          pipeline: [
            { $match: { _id: 'app_settings' } },
            { $project: { openaiCompatible: 1, primaryModel: 1 } },
          ],
        });
        expect(result).toEqual({
          rows: [
            {
              _id: 'app_settings',
              primaryModel: 'gemini-2.5-flash',
              openaiCompatible: [
                {
                  name: 'ollama',
                  baseUrl: 'http://127.0.0.1:11434/v1',
                  apiKey: '••••lk04',
                },
              ],
            },
          ],
        });
        const all = JSON.stringify(
          await sandbox.execute({ operation: 'find', collection: 'settings' }),
        );
        for (const secret of SECRETS) expect(all).not.toContain(secret);
      });

      it('masks a key copied into an ai_ collection', async () => {
        await sandbox.execute({
          operation: 'insertOne',
          collection: 'ai_copied',
          data: { note: `the key is ${GEMINI_KEY}!`, keys: [OPENAI_KEY] },
        });
        const result = await sandbox.execute({
          operation: 'find',
          collection: 'ai_copied',
          options: { projection: { _id: 0 } },
        });
        expect(result).toEqual({
          rows: [{ note: 'the key is ••••gk01!', keys: ['••••ok02'] }],
        });
      });

      it('reads the non-secret documents of settings', async () => {
        expect(
          await sandbox.execute({
            operation: 'findOne',
            collection: 'settings',
            filter: { _id: 'system_instruction' },
          }),
        ).toEqual({
          row: {
            _id: 'system_instruction',
            memory: 'The owner likes green tea.',
            memoryEnabled: true,
          },
        });
      });
    });

    describe('collections whose owner is not loaded (fail closed)', () => {
      it('refuses raw writes to cronjobs and writes nothing', async () => {
        for (const op of [
          {
            operation: 'insertOne',
            data: { name: 'x', instruction: 'y', cronExpression: '0 8 * * *' },
          },
          {
            operation: 'updateMany',
            filter: {},
            update: { $set: { name: 'z' } },
          },
          { operation: 'deleteMany', filter: {} },
        ]) {
          expect(
            await sandbox.execute({ collection: 'cronjobs', ...op }),
          ).toEqual({
            error: "Writes to 'cronjobs' are not available right now.",
          });
        }
        expect(await db.collection('cronjobs').countDocuments()).toBe(0);
      });

      it('shows no whatsapp_messages without the permissions module', async () => {
        await db.collection('whatsapp_messages').insertOne({
          _id: 'W1' as never,
          phone: '4915550000001',
          body: 'hi',
        });
        expect(
          await sandbox.execute({
            operation: 'find',
            collection: 'whatsapp_messages',
          }),
        ).toEqual({ rows: [] });
        expect(
          await sandbox.execute({
            operation: 'aggregate',
            collection: 'whatsapp_messages',
            pipeline: [{ $count: 'n' }],
          }),
        ).toEqual({ rows: [] });
      });
    });
  },
);

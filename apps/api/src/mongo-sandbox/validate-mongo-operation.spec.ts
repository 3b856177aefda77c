import mongoose from 'mongoose';
import { collectionAccess } from './collection-access';
import type { MongoOperation } from './mongo-operation';
import { validateMongoOperation } from './validate-mongo-operation';

function accepted(op: unknown): MongoOperation {
  const result = validateMongoOperation(op);
  if (!result.valid)
    throw new Error(`expected acceptance, got: ${result.error}`);
  return result.op;
}

function refusal(op: unknown): string {
  const result = validateMongoOperation(op);
  if (result.valid)
    throw new Error(`expected a refusal for ${JSON.stringify(op)}`);
  return result.error;
}

const PROTECTED_WRITE = (name: string) =>
  `Access denied: '${name}' is a protected core collection`;
const NOT_WRITABLE =
  "Write operations are restricted to AI-managed collections (master, contacts, schedule, cronjobs) or collections with the 'ai_' prefix";
const JS = 'Server-side JavaScript is not allowed';
const SECRET = "Access denied: secret fields of 'settings'";

describe('validateMongoOperation', () => {
  describe('operations', () => {
    it.each([
      'find',
      'findOne',
      'countDocuments',
      'aggregate',
      'insertOne',
      'insertMany',
      'updateOne',
      'updateMany',
      'deleteOne',
      'deleteMany',
      'createCollection',
      'createIndex',
      'listCollections',
    ])('accepts %s with its arguments', (operation) => {
      const args: Record<string, unknown> = {
        find: {
          filter: { a: 1 },
          options: { limit: 5, skip: 1, sort: { a: -1 }, projection: { a: 1 } },
        },
        findOne: { filter: {} },
        countDocuments: { filter: { a: { $gt: 1 } } },
        aggregate: {
          pipeline: [
            { $match: { a: 1 } },
            { $group: { _id: '$b', n: { $sum: 1 } } },
          ],
        },
        insertOne: { data: { a: 1 } },
        insertMany: { data: [{ a: 1 }, { a: 2 }] },
        updateOne: {
          filter: {},
          update: { $set: { a: 2 } },
          options: { upsert: true },
        },
        updateMany: { filter: {}, update: [{ $set: { a: 2 } }] },
        deleteOne: { filter: { a: 1 } },
        deleteMany: { filter: {} },
        createCollection: { options: { capped: true, size: 4096, max: 10 } },
        createIndex: {
          keys: { a: 1, b: -1 },
          options: { name: 'a_b', unique: true, sparse: true },
        },
        listCollections: {},
      };
      const op = accepted({
        operation,
        collection: 'ai_notes',
        ...(args[operation] as object),
      });
      expect(op.operation).toBe(operation);
      expect(op.collection).toBe(
        operation === 'listCollections' ? '' : 'ai_notes',
      );
    });

    it('refuses an operation outside the whitelist, naming the allowed ones', () => {
      expect(refusal({ operation: 'drop', collection: 'ai_x' })).toBe(
        "Operation 'drop' is not allowed. Allowed operations: find, findOne, insertOne, insertMany, updateOne, updateMany, " +
          'deleteOne, deleteMany, countDocuments, aggregate, createCollection, createIndex, listCollections.',
      );
      expect(refusal({ operation: 'mapReduce', collection: 'ai_x' })).toMatch(
        /^Operation 'mapReduce' is not allowed/,
      );
      expect(refusal({ collection: 'ai_x' })).toMatch(/^Missing 'operation'/);
      expect(refusal('find')).toMatch(/^The operation must be a JSON object/);
      expect(refusal([{ operation: 'find' }])).toMatch(
        /^The operation must be a JSON object/,
      );
    });

    it('refuses unknown top-level arguments and hints where options go', () => {
      expect(
        refusal({ operation: 'find', collection: 'contacts', limit: 5 }),
      ).toMatch(
        /^Unknown argument 'limit'\..*limit, skip and upsert go inside options/,
      );
    });

    it('refuses a non-empty argument the operation does not use, ignores empty ones', () => {
      expect(
        refusal({ operation: 'find', collection: 'contacts', data: { a: 1 } }),
      ).toBe("'data' is not used by find; find takes 'filter' and 'options'.");
      expect(
        accepted({
          operation: 'insertOne',
          collection: 'contacts',
          data: { name: 'A' },
          filter: {},
          pipeline: [],
          options: null,
        }).data,
      ).toEqual({
        name: 'A',
      });
    });

    it('listCollections ignores the collection argument', () => {
      expect(
        accepted({ operation: 'listCollections', collection: 'auth_owner' }),
      ).toEqual({ operation: 'listCollections', collection: '' });
      expect(accepted({ operation: 'listCollections' })).toEqual({
        operation: 'listCollections',
        collection: '',
      });
    });
  });

  describe('collections', () => {
    it.each(['chats', 'messages', 'settings', 'media', 'attachments'])(
      'keeps %s read-only',
      (name) => {
        expect(
          accepted({ operation: 'find', collection: name }).collection,
        ).toBe(name);
        expect(
          refusal({ operation: 'insertOne', collection: name, data: { a: 1 } }),
        ).toBe(
          `Access denied: '${name}' is a protected core collection and is read-only for you. ` +
            'You may read it with find, findOne, countDocuments or aggregate, but insertOne is refused.',
        );
        expect(
          refusal({
            operation: 'createIndex',
            collection: name,
            keys: { a: 1 },
          }),
        ).toMatch(PROTECTED_WRITE(name));
      },
    );

    it('writes only to AI-managed and ai_ collections', () => {
      for (const name of [
        'master',
        'contacts',
        'schedule',
        'cronjobs',
        'ai_notes',
        'ai_x1',
      ]) {
        expect(
          accepted({ operation: 'deleteMany', collection: name, filter: {} })
            .collection,
        ).toBe(name);
      }
      for (const name of [
        'notes',
        'whatsapp_permissions',
        'ai_',
        'AI_notes',
        'Contacts',
      ]) {
        expect(
          refusal({
            operation: 'updateOne',
            collection: name,
            filter: {},
            update: { $set: { a: 1 } },
          }),
        ).toMatch(
          new RegExp(
            `^${NOT_WRITABLE.replace(/[()]/g, '\\$&')}\\. '${name}' is read-only for you`,
          ),
        );
      }
      // Reading them is fine.
      expect(
        accepted({ operation: 'find', collection: 'whatsapp_permissions' })
          .collection,
      ).toBe('whatsapp_permissions');
    });

    it.each(['auth_owner', 'auth_sessions', 'auth_whatever'])(
      'hides %s from every operation',
      (name) => {
        for (const operation of ['find', 'countDocuments', 'aggregate']) {
          expect(
            refusal({
              operation,
              collection: name,
              pipeline: operation === 'aggregate' ? [] : undefined,
            }),
          ).toBe(
            `Access denied: '${name}' is a private system collection; it cannot be read or written.`,
          );
        }
        expect(collectionAccess(name)).toBe('hidden');
      },
    );

    it.each([
      ['system.users', "names starting with 'system.' are reserved"],
      ['admin.system.users', "must not contain '.'"],
      ['other.contacts', "must not contain '.'"],
      ['a$b', "must not contain '$'"],
      ['a\0b', 'must not contain NUL'],
      ['', 'must not be empty'],
      ['x'.repeat(121), 'at most 120 characters'],
    ])('refuses the collection name %j', (name, reason) => {
      const error = refusal({ operation: 'find', collection: name });
      expect(error).toMatch(/^Invalid collection name '/);
      expect(error).toContain(reason);
    });

    it('refuses a missing or non-string collection', () => {
      expect(refusal({ operation: 'find' })).toBe(
        "Missing 'collection': name the collection to run find on.",
      );
      expect(refusal({ operation: 'find', collection: 42 })).toBe(
        "Invalid collection name: 'collection' must be a string (got number).",
      );
      expect(refusal({ operation: 'find', collection: { $ne: 'x' } })).toMatch(
        /^Invalid collection name: 'collection' must be a string/,
      );
    });

    it('reports each collection access', () => {
      expect(collectionAccess('chats')).toBe('read-only');
      expect(collectionAccess('notes')).toBe('read-only');
      expect(collectionAccess('contacts')).toBe('read-write');
      expect(collectionAccess('ai_books')).toBe('read-write');
      expect(collectionAccess('system.views')).toBe('hidden');
    });
  });

  describe('collections the app also writes', () => {
    const APP_WRITTEN = 'the app also writes this collection';
    it.each([
      ['cronjobs', { unique: true }],
      ['cronjobs', { partialFilterExpression: { enabled: true } }],
      ['cronjobs', { expireAfterSeconds: 0 }],
      ['contacts', { unique: true, name: 'by_email' }],
      ['schedule', { expireAfterSeconds: 3600 }],
      ['master', { partialFilterExpression: { a: { $exists: true } } }],
    ])(
      'refuses a unique, partial or TTL index on %s (%j)',
      (collection, options) => {
        const error = refusal({
          operation: 'createIndex',
          collection,
          keys: { name: 1 },
          options,
        });
        expect(error).toContain(APP_WRITTEN);
        expect(error).toContain(`'${collection}'`);
      },
    );

    it('refuses a capped collection under an AI-managed name', () => {
      expect(
        refusal({
          operation: 'createCollection',
          collection: 'cronjobs',
          options: { capped: true, size: 4096 },
        }),
      ).toContain(APP_WRITTEN);
    });

    it('keeps plain indexes there, and every option on ai_ collections', () => {
      accepted({
        operation: 'createIndex',
        collection: 'cronjobs',
        keys: { name: 1 },
        options: { name: 'by_name', sparse: true, unique: false },
      });
      accepted({
        operation: 'createIndex',
        collection: 'ai_books',
        keys: { isbn: 1 },
        options: {
          unique: true,
          partialFilterExpression: { isbn: { $exists: true } },
          expireAfterSeconds: 60,
        },
      });
      accepted({
        operation: 'createCollection',
        collection: 'ai_log',
        options: { capped: true, size: 4096 },
      });
    });
  });

  describe('server-side JavaScript', () => {
    it.each([
      [
        'top-level $where',
        {
          operation: 'find',
          collection: 'chats',
          filter: { $where: 'sleep(1000)' },
        },
        "'$where' in filter",
      ],
      [
        '$where under $or',
        {
          operation: 'find',
          collection: 'chats',
          filter: { $or: [{ a: 1 }, { $where: 'true' }] },
        },
        "'$where' in filter.$or[1]",
      ],
      [
        '$function in $expr',
        {
          operation: 'countDocuments',
          collection: 'chats',
          filter: {
            $expr: { $function: { body: 'return 1', args: [], lang: 'js' } },
          },
        },
        "'$function' in filter.$expr",
      ],
      [
        '$accumulator in $group',
        {
          operation: 'aggregate',
          collection: 'ai_x',
          pipeline: [{ $group: { _id: null, x: { $accumulator: {} } } }],
        },
        "'$accumulator' in pipeline[0].$group.x",
      ],
      [
        '$function deep in $facet',
        {
          operation: 'aggregate',
          collection: 'ai_x',
          pipeline: [
            { $facet: { a: [{ $project: { y: { $function: {} } } }] } },
          ],
        },
        "'$function' in pipeline[0].$facet.a[0].$project.y",
      ],
      [
        '$where in a $lookup pipeline',
        {
          operation: 'aggregate',
          collection: 'ai_x',
          pipeline: [
            {
              $lookup: {
                from: 'chats',
                as: 'c',
                pipeline: [{ $match: { $where: '1' } }],
              },
            },
          ],
        },
        "'$where' in pipeline[0].$lookup.pipeline[0].$match",
      ],
      [
        '$function in an update pipeline',
        {
          operation: 'updateMany',
          collection: 'ai_x',
          filter: {},
          update: [{ $set: { a: { $function: {} } } }],
        },
        "'$function' in update[0].$set.a",
      ],
      [
        '$function in an update document',
        {
          operation: 'updateOne',
          collection: 'ai_x',
          filter: {},
          update: { $set: { a: { $function: {} } } },
        },
        "'$function' in update.$set.a",
      ],
      [
        '$where in an update filter',
        {
          operation: 'updateOne',
          collection: 'ai_x',
          filter: { $where: '1' },
          update: { $set: { a: 1 } },
        },
        "'$where' in filter",
      ],
      [
        '$where in partialFilterExpression',
        {
          operation: 'createIndex',
          collection: 'ai_x',
          keys: { a: 1 },
          options: { partialFilterExpression: { $where: '1' } },
        },
        "'$where' in options.partialFilterExpression",
      ],
      [
        '$where in inserted data',
        {
          operation: 'insertOne',
          collection: 'ai_x',
          data: { nested: { $where: '1' } },
        },
        "'$where' in data.nested",
      ],
    ])('refuses %s', (_case, op, where) => {
      expect(refusal(op)).toBe(
        `${JS}: ${where}. Use query operators and aggregation expressions instead.`,
      );
    });
  });

  describe('aggregation stages', () => {
    it.each(['$out', '$merge'])('refuses %s wherever it appears', (stage) => {
      const expected = `Aggregation stage '${stage}' is not allowed: pipelines may only read. Use insertMany or updateMany to write.`;
      expect(
        refusal({
          operation: 'aggregate',
          collection: 'chats',
          pipeline: [{ $match: {} }, { [stage]: 'ai_copy' }],
        }),
      ).toBe(expected);
      expect(
        refusal({
          operation: 'aggregate',
          collection: 'ai_x',
          pipeline: [{ $facet: { a: [{ [stage]: 'x' }] } }],
        }),
      ).toBe(expected);
      expect(
        refusal({
          operation: 'aggregate',
          collection: 'ai_x',
          pipeline: [
            { $unionWith: { coll: 'ai_y', pipeline: [{ [stage]: 'x' }] } },
          ],
        }),
      ).toBe(expected);
    });

    it.each([
      '$currentOp',
      '$collStats',
      '$indexStats',
      '$listSessions',
      '$planCacheStats',
      '$documents',
      '$changeStream',
      '$geoNear',
      '$search',
    ])('refuses the stage %s', (stage) => {
      expect(
        refusal({
          operation: 'aggregate',
          collection: 'ai_x',
          pipeline: [{ [stage]: {} }],
        }),
      ).toMatch(
        new RegExp(
          `^Aggregation stage '\\${stage}' is not allowed\\. Allowed stages: \\$match, `,
        ),
      );
    });

    it('accepts every allowed stage shape, including nested pipelines', () => {
      const op = accepted({
        operation: 'aggregate',
        collection: 'contacts',
        pipeline: [
          { $match: { tags: 'family' } },
          {
            $lookup: {
              from: 'schedule',
              localField: '_id',
              foreignField: 'contactId',
              as: 'events',
              pipeline: [{ $sort: { start: 1 } }],
            },
          },
          {
            $unionWith: {
              coll: 'ai_people',
              pipeline: [{ $project: { name: 1 } }],
            },
          },
          { $unionWith: 'ai_more' },
          {
            $graphLookup: {
              from: 'contacts',
              startWith: '$_id',
              connectFromField: '_id',
              connectToField: 'parent',
              as: 'tree',
            },
          },
          {
            $facet: {
              byTag: [{ $sortByCount: '$tags' }],
              total: [{ $count: 'n' }],
            },
          },
          { $sort: { name: 1 } },
        ],
      });
      expect(op.pipeline).toHaveLength(7);
    });

    it('refuses joins with other databases, hidden or invalid collections', () => {
      expect(
        refusal({
          operation: 'aggregate',
          collection: 'ai_x',
          pipeline: [
            {
              $lookup: { from: { db: 'admin', coll: 'system.users' }, as: 'u' },
            },
          ],
        }),
      ).toBe(
        "'$lookup.from' must be a collection name in this database; other databases are out of reach.",
      );
      expect(
        refusal({
          operation: 'aggregate',
          collection: 'ai_x',
          pipeline: [{ $unionWith: { coll: 'auth_sessions' } }],
        }),
      ).toBe(
        "Access denied: 'auth_sessions' is a private system collection; it cannot be read or written.",
      );
      expect(
        refusal({
          operation: 'aggregate',
          collection: 'ai_x',
          pipeline: [{ $unionWith: 'admin.system.users' }],
        }),
      ).toMatch(
        /^Invalid collection name 'admin\.system\.users' in '\$unionWith'/,
      );
      expect(
        refusal({
          operation: 'aggregate',
          collection: 'ai_x',
          pipeline: [
            { $lookup: { as: 'x', pipeline: [{ $documents: [{}] }] } },
          ],
        }),
      ).toBe("'$lookup.from' must name the collection to read.");
    });

    it.each(['$lookup', '$graphLookup', '$unionWith'])(
      'refuses %s into settings from any collection',
      (stage) => {
        const body =
          stage === '$unionWith'
            ? 'settings'
            : {
                from: 'settings',
                as: 's',
                startWith: '$a',
                connectFromField: 'a',
                connectToField: 'b',
              };
        expect(
          refusal({
            operation: 'aggregate',
            collection: 'chats',
            pipeline: [{ [stage]: body }],
          }),
        ).toMatch(
          new RegExp(
            `^Access denied: '\\${stage}' cannot read 'settings': it holds secrets`,
          ),
        );
      },
    );

    it('refuses malformed pipelines, naming the place', () => {
      expect(
        refusal({
          operation: 'aggregate',
          collection: 'ai_x',
          pipeline: { $match: {} },
        }),
      ).toBe("'pipeline' must be an array of stages (got an object).");
      expect(refusal({ operation: 'aggregate', collection: 'ai_x' })).toBe(
        "'pipeline' must be an array of stages (got undefined).",
      );
      expect(
        refusal({
          operation: 'aggregate',
          collection: 'ai_x',
          pipeline: [{ $match: {}, $limit: 1 }],
        }),
      ).toMatch(
        /^'pipeline\[0\]' must be an object with exactly one stage operator/,
      );
      expect(
        refusal({
          operation: 'aggregate',
          collection: 'ai_x',
          pipeline: ['$match'],
        }),
      ).toMatch(/^'pipeline\[0\]' must be an object/);
    });
  });

  describe('updates', () => {
    it('refuses replacement documents and unknown operators', () => {
      expect(
        refusal({
          operation: 'updateOne',
          collection: 'ai_x',
          filter: {},
          update: { name: 'x' },
        }),
      ).toMatch(
        /^'update' must use update operators such as \$set; 'name' is a plain field/,
      );
      expect(
        refusal({
          operation: 'updateOne',
          collection: 'ai_x',
          filter: {},
          update: { $foo: { a: 1 } },
        }),
      ).toMatch(/^Update operator '\$foo' is not allowed/);
      expect(
        refusal({
          operation: 'updateOne',
          collection: 'ai_x',
          filter: {},
          update: {},
        }),
      ).toMatch(/^'update' must be an update document/);
      expect(
        refusal({
          operation: 'updateOne',
          collection: 'ai_x',
          filter: {},
          update: [],
        }),
      ).toBe("'update' must not be an empty pipeline.");
    });

    it('allows only reshaping stages in update pipelines', () => {
      expect(
        refusal({
          operation: 'updateMany',
          collection: 'ai_x',
          filter: {},
          update: [{ $lookup: { from: 'chats', as: 'c' } }],
        }),
      ).toMatch(
        /^Update pipeline stage '\$lookup' is not allowed\. Allowed stages: \$set, \$addFields, \$project, \$unset, \$replaceRoot, \$replaceWith\./,
      );
      expect(
        refusal({
          operation: 'updateMany',
          collection: 'ai_x',
          filter: {},
          update: [{ $merge: 'x' }],
        }),
      ).toMatch(/^Aggregation stage '\$merge' is not allowed/);
    });

    it('requires an explicit filter to update or delete', () => {
      expect(refusal({ operation: 'deleteMany', collection: 'ai_x' })).toBe(
        "deleteMany needs a 'filter' object (use {} to match every document).",
      );
      expect(
        refusal({
          operation: 'updateMany',
          collection: 'ai_x',
          update: { $set: { a: 1 } },
        }),
      ).toMatch(/^updateMany needs a 'filter'/);
    });
  });

  describe('settings secrets', () => {
    it.each([
      [
        'a filter on a key',
        {
          operation: 'find',
          collection: 'settings',
          filter: { geminiApiKey: { $regex: '^AIza' } },
        },
        "'geminiApiKey' at filter.geminiApiKey",
      ],
      [
        'a dotted path',
        {
          operation: 'countDocuments',
          collection: 'settings',
          filter: { 'openaiCompatible.apiKey': { $exists: true } },
        },
        'filter.openaiCompatible.apiKey',
      ],
      [
        '$elemMatch',
        {
          operation: 'find',
          collection: 'settings',
          filter: { openaiCompatible: { $elemMatch: { apiKey: /x/.source } } },
        },
        'filter.openaiCompatible.$elemMatch.apiKey',
      ],
      [
        '$expr with a $path',
        {
          operation: 'find',
          collection: 'settings',
          filter: {
            $expr: { $eq: [{ $substrCP: ['$braveApiKey', 0, 1] }, 'B'] },
          },
        },
        "'$braveApiKey'",
      ],
      [
        'a projection',
        {
          operation: 'findOne',
          collection: 'settings',
          options: { projection: { openaiApiKey: 1 } },
        },
        'options.projection.openaiApiKey',
      ],
      [
        'a sort',
        {
          operation: 'find',
          collection: 'settings',
          options: { sort: { geminiApiKey: 1 } },
        },
        'options.sort.geminiApiKey',
      ],
      [
        'a $group on the key',
        {
          operation: 'aggregate',
          collection: 'settings',
          pipeline: [{ $group: { _id: '$geminiApiKey', n: { $sum: 1 } } }],
        },
        "'$geminiApiKey' at pipeline[0].$group._id",
      ],
      [
        'a $$this path',
        {
          operation: 'aggregate',
          collection: 'settings',
          pipeline: [
            {
              $project: {
                k: {
                  $map: { input: '$openaiCompatible', in: '$$this.apiKey' },
                },
              },
            },
          ],
        },
        "'$$this.apiKey'",
      ],
      [
        'other secret-like names',
        {
          operation: 'find',
          collection: 'settings',
          filter: { whatsappToken: 'x', 'smtp.password': 'y' },
        },
        'whatsappToken',
      ],
      [
        'a snake_case key',
        { operation: 'find', collection: 'settings', filter: { api_key: 'x' } },
        'api_key',
      ],
      [
        'a $facet sub-pipeline',
        {
          operation: 'aggregate',
          collection: 'settings',
          pipeline: [{ $facet: { a: [{ $match: { geminiApiKey: 'x' } }] } }],
        },
        'pipeline[0].$facet.a[0].$match.geminiApiKey',
      ],
    ])('refuses %s', (_case, op, mention) => {
      const error = refusal(op);
      expect(error).toMatch(
        new RegExp(
          `^${SECRET.replace(/[$]/g, '\\$')} cannot be queried, sorted, grouped or projected`,
        ),
      );
      expect(error).toContain(mention);
    });

    it.each([
      '$objectToArray',
      '$getField',
      '$arrayToObject',
      '$jsonSchema',
      '$bsonSize',
    ])('refuses %s on settings only', (operator) => {
      const pipeline = [{ $project: { all: { [operator]: '$$ROOT' } } }];
      expect(
        refusal({ operation: 'aggregate', collection: 'settings', pipeline }),
      ).toBe(
        `Access denied: '${operator}' cannot be used on 'settings': it could reveal secret fields.`,
      );
      expect(
        accepted({ operation: 'aggregate', collection: 'chats', pipeline })
          .pipeline,
      ).toEqual(pipeline);
    });

    it('refuses joins inside a pipeline on settings', () => {
      expect(
        refusal({
          operation: 'aggregate',
          collection: 'settings',
          pipeline: [{ $unionWith: 'ai_probe' }],
        }),
      ).toBe(
        "Access denied: '$unionWith' cannot be used in a pipeline on 'settings': joining other data could reveal its secret fields.",
      );
    });

    it('lets the AI read settings without naming secrets, and name key-like fields elsewhere', () => {
      expect(
        accepted({
          operation: 'find',
          collection: 'settings',
          filter: { _id: 'app_settings' },
          options: { projection: { timezone: 1 } },
        }).filter,
      ).toEqual({
        _id: 'app_settings',
      });
      expect(
        accepted({
          operation: 'find',
          collection: 'ai_keys',
          filter: { apiKey: 'x' },
        }).filter,
      ).toEqual({ apiKey: 'x' });
    });
  });

  describe('argument types', () => {
    it.each(
      (
        [
          [
            { operation: 'find', collection: 'ai_x', filter: [] },
            "'filter' must be an object (got an array).",
          ],
          [
            { operation: 'find', collection: 'ai_x', filter: 'name' },
            "'filter' must be an object (got a string).",
          ],
          [
            { operation: 'insertOne', collection: 'ai_x', data: [{ a: 1 }] },
            "'data' must be a single document for insertOne; use insertMany to insert an array.",
          ],
          [
            { operation: 'insertOne', collection: 'ai_x', data: {} },
            "'data' must be a non-empty document for insertOne (got an object).",
          ],
          [
            { operation: 'insertOne', collection: 'ai_x' },
            "'data' must be a non-empty document for insertOne (got undefined).",
          ],
          [
            { operation: 'insertMany', collection: 'ai_x', data: { a: 1 } },
            "'data' must be an array of 1 to 1000 documents for insertMany (got an object).",
          ],
          [
            { operation: 'insertMany', collection: 'ai_x', data: [] },
            "'data' must be an array of 1 to 1000 documents for insertMany (got 0 documents).",
          ],
          [
            {
              operation: 'insertMany',
              collection: 'ai_x',
              data: Array.from({ length: 1001 }, () => ({})),
            },
            "'data' must be an array of 1 to 1000 documents for insertMany (got 1001 documents).",
          ],
          [
            {
              operation: 'insertMany',
              collection: 'ai_x',
              data: [{ a: 1 }, 'b'],
            },
            "'data[1]' must be a document (got a string).",
          ],
          [
            { operation: 'find', collection: 'ai_x', options: { limit: 0 } },
            "'options.limit' must be a positive integer (got 0).",
          ],
          [
            { operation: 'find', collection: 'ai_x', options: { limit: 2.5 } },
            "'options.limit' must be a positive integer (got 2.5).",
          ],
          [
            { operation: 'find', collection: 'ai_x', options: { limit: '5' } },
            "'options.limit' must be a positive integer (got a string).",
          ],
          [
            { operation: 'find', collection: 'ai_x', options: { skip: -1 } },
            "'options.skip' must be an integer from 0 to 1000000 (got -1).",
          ],
          [
            {
              operation: 'updateOne',
              collection: 'ai_x',
              filter: {},
              update: { $set: { a: 1 } },
              options: { upsert: 'yes' },
            },
            "'options.upsert' must be true or false (got a string).",
          ],
          [
            {
              operation: 'find',
              collection: 'ai_x',
              options: { hint: { a: 1 } },
            },
            "'options.hint' is not accepted by find. Allowed options: projection, sort, limit, skip.",
          ],
          [
            { operation: 'find', collection: 'ai_x', options: 5 },
            "'options' must be an object (got number).",
          ],
          [
            {
              operation: 'deleteOne',
              collection: 'ai_x',
              filter: {},
              options: { collation: {} },
            },
            "'options' is not used by deleteOne; deleteOne takes 'filter'.",
          ],
          [
            {
              operation: 'insertOne',
              collection: 'ai_x',
              data: { a: 1 },
              options: { ordered: false },
            },
            "'options' is not used by insertOne; insertOne takes 'data'.",
          ],
          [
            {
              operation: 'createIndex',
              collection: 'ai_x',
              keys: { a: 1 },
              options: { background: true },
            },
            "'options.background' is not accepted by createIndex. Allowed options: name, unique, sparse, expireAfterSeconds, partialFilterExpression.",
          ],
          [
            { operation: 'createIndex', collection: 'ai_x' },
            'createIndex needs \'keys\', e.g. { "name": 1 } (got undefined).',
          ],
          [
            { operation: 'createIndex', collection: 'ai_x', keys: { a: 2 } },
            '\'keys.a\' must be 1, -1, "text", "2dsphere", "2d" or "hashed".',
          ],
          [
            {
              operation: 'createCollection',
              collection: 'ai_v',
              options: { viewOn: 'chats', pipeline: [] },
            },
            "'options.viewOn' is not accepted by createCollection. Allowed options: capped, size, max.",
          ],
          [
            {
              operation: 'createCollection',
              collection: 'ai_v',
              options: { validator: { $where: '1' } },
            },
            "'options.validator' is not accepted by createCollection. Allowed options: capped, size, max.",
          ],
          [
            {
              operation: 'find',
              collection: 'ai_x',
              filter: { _id: { $oid: 'nope' } },
            },
            'Invalid {"$oid"} at \'filter._id\': expected 24 hexadecimal characters.',
          ],
          [
            {
              operation: 'find',
              collection: 'ai_x',
              filter: { at: { $gt: { $date: 'yesterday' } } },
            },
            'Invalid {"$date"} at \'filter.at.$gt\': expected an ISO 8601 date such as "2025-01-31T09:00:00Z".',
          ],
        ] as Array<[object, string]>
      ).map(([op, message]) => [message, op] as const),
    )('refuses with: %s', (message, op) => {
      expect(refusal(op)).toBe(message);
    });

    it('refuses values nested too deeply', () => {
      let filter: Record<string, unknown> = { a: 1 };
      for (let i = 0; i < 80; i++) filter = { $and: [filter] };
      expect(
        refusal({ operation: 'find', collection: 'ai_x', filter }),
      ).toMatch(/is nested too deeply \(more than 64 levels\)\.$/);
    });

    it('refuses a __proto__ field name', () => {
      const filter = JSON.parse('{"__proto__": {"polluted": true}}');
      expect(refusal({ operation: 'find', collection: 'ai_x', filter })).toBe(
        "'filter' uses the field name '__proto__', which is not allowed.",
      );
    });
  });

  describe('Extended JSON', () => {
    it('converts $oid and $date anywhere, and leaves other operators alone', () => {
      const hex = '507f1f77bcf86cd799439011';
      const op = accepted({
        operation: 'updateOne',
        collection: 'schedule',
        filter: {
          _id: { $oid: hex },
          start: { $gte: { $date: '2025-01-31T09:00:00Z' } },
          title: { $regex: '^Den', $options: 'i' },
        },
        update: {
          $set: {
            contactId: { $oid: hex },
            end: { $date: 1738314000000 },
            seen: { $date: { $numberLong: '1738314000000' } },
          },
        },
      });
      const filter = op.filter as Record<string, Record<string, unknown>>;
      expect(filter['_id']).toBeInstanceOf(mongoose.mongo.ObjectId);
      expect(String(filter['_id'])).toBe(hex);
      expect(filter['start']['$gte']).toEqual(new Date('2025-01-31T09:00:00Z'));
      expect(filter['title']).toEqual({ $regex: '^Den', $options: 'i' });
      const set = (op.update as Record<string, Record<string, unknown>>)[
        '$set'
      ];
      expect(set['contactId']).toBeInstanceOf(mongoose.mongo.ObjectId);
      expect(set['end']).toEqual(new Date(1738314000000));
      expect(set['seen']).toEqual(new Date(1738314000000));
    });

    it('converts inside insertMany documents and pipelines, without touching the input', () => {
      const data = [
        { when: { $date: '2025-02-01' } },
        { ref: { $oid: '507f1f77bcf86cd799439011' } },
      ];
      const op = accepted({
        operation: 'insertMany',
        collection: 'ai_log',
        data,
      });
      expect(
        (op.data as Array<Record<string, unknown>>)[0]['when'],
      ).toBeInstanceOf(Date);
      expect(data[0].when).toEqual({ $date: '2025-02-01' });
      const agg = accepted({
        operation: 'aggregate',
        collection: 'ai_log',
        pipeline: [
          { $match: { when: { $lt: { $date: '2026-01-01T00:00:00Z' } } } },
        ],
      });
      expect(
        (
          agg.pipeline?.[0]['$match'] as Record<string, Record<string, unknown>>
        )['when']['$lt'],
      ).toBeInstanceOf(Date);
    });
  });
});

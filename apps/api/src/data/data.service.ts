import {
  BadRequestException,
  Injectable,
  NotFoundException,
} from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import type { Connection, mongo } from 'mongoose';
import {
  AI_MANAGED_COLLECTIONS,
  type CollectionDocumentsPage,
  type CollectionInfo,
} from '@metatronos/shared-types';
import {
  collectionAccess,
  collectionNameProblem,
} from '../mongo-sandbox/collection-access';
import {
  MongoSandboxService,
  QUERY_TIME_LIMIT_MS,
} from '../mongo-sandbox/mongo-sandbox.service';

/** The owner's read-only view of the database, with the same visibility and redaction as the AI's sandbox. */
@Injectable()
export class DataService {
  constructor(
    @InjectConnection() private readonly connection: Connection,
    private readonly sandbox: MongoSandboxService,
  ) {}

  /** Every visible collection plus the AI-managed ones not created yet, by name. */
  async listCollections(): Promise<CollectionInfo[]> {
    const db = this.database();
    const existing = (
      await db.listCollections({}, { nameOnly: true }).toArray()
    ).map((c) => c.name);
    const names = [...new Set([...existing, ...AI_MANAGED_COLLECTIONS])]
      .filter((name) => collectionAccess(name) !== 'hidden')
      .sort();
    return Promise.all(
      names.map(async (name) => {
        const access = collectionAccess(name);
        return {
          name,
          count: await db
            .collection(name)
            .countDocuments({}, { maxTimeMS: QUERY_TIME_LIMIT_MS }),
          access: access === 'read-write' ? 'read-write' : 'read-only',
        } satisfies CollectionInfo;
      }),
    );
  }

  /** One page of a collection, newest first; 404 for an unknown or hidden name, 400 for an impossible one. */
  async documents(
    name: string,
    limit: number,
    skip: number,
  ): Promise<CollectionDocumentsPage> {
    const access = collectionAccess(name);
    if (access === 'hidden')
      throw new NotFoundException(`Collection '${name}' not found`);
    const problem = collectionNameProblem(name);
    if (problem)
      throw new BadRequestException(
        `Invalid collection name '${name.slice(0, 120)}': ${problem}`,
      );
    const db = this.database();
    if (!AI_MANAGED_COLLECTIONS.includes(name)) {
      const found = await db
        .listCollections({ name }, { nameOnly: true })
        .toArray();
      if (found.length === 0)
        throw new NotFoundException(`Collection '${name}' not found`);
    }
    const collection = db.collection(name);
    const [total, docs] = await Promise.all([
      collection.countDocuments({}, { maxTimeMS: QUERY_TIME_LIMIT_MS }),
      collection
        .find(
          {},
          { sort: { _id: -1 }, skip, limit, maxTimeMS: QUERY_TIME_LIMIT_MS },
        )
        .toArray(),
    ]);
    return {
      collection: name,
      access,
      total,
      limit,
      skip,
      documents: await this.sandbox.toPlainDocuments(name, docs),
    };
  }

  private database(): mongo.Db {
    const db = this.connection.db;
    if (!db)
      throw new Error('Client must be connected before running operations');
    return db;
  }
}

import { Global, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  MongooseModule,
  getConnectionToken,
  getModelToken,
} from '@nestjs/mongoose';
import type { Connection, Model, Schema } from 'mongoose';
import { randomBytes } from 'node:crypto';
import { TEST_MONGODB_URI_ENV } from '../../../test/support/test-database';
import { DEFAULT_DB_SCHEMA_DOC } from './default-db-schema';
import { StartUpWork } from '../../database/start-up-work';
import { PersonalDataModule } from './personal-data.module';
import { Contact, ContactSchema } from './schemas/contact.schema';
import { OwnerProfileSchema } from './schemas/master.schema';
import {
  ScheduleEntry,
  ScheduleEntrySchema,
} from './schemas/schedule-entry.schema';

/** As the app's global DatabaseModule provides it: the module's index builds run there. */
@Global()
@Module({ providers: [StartUpWork], exports: [StartUpWork] })
class StartUpWorkModule {}

describe('PersonalDataModule (embedded database)', () => {
  let moduleRef: TestingModule;
  let connection: Connection;
  let contacts: Model<Contact>;
  let schedule: Model<ScheduleEntry>;

  beforeAll(async () => {
    const uri = process.env[TEST_MONGODB_URI_ENV];
    if (!uri)
      throw new Error(
        `${TEST_MONGODB_URI_ENV} is not set: is the Jest globalSetup configured?`,
      );
    moduleRef = await Test.createTestingModule({
      imports: [
        MongooseModule.forRoot(uri, {
          dbName: `test_personal_${randomBytes(6).toString('hex')}`,
          bufferCommands: false,
          autoIndex: false,
        }),
        StartUpWorkModule,
        PersonalDataModule,
      ],
    }).compile();
    await moduleRef.init();
    await moduleRef.get(StartUpWork).settled();
    connection = moduleRef.get(getConnectionToken());
    contacts = moduleRef.get(getModelToken(Contact.name));
    schedule = moduleRef.get(getModelToken(ScheduleEntry.name));
  });

  afterAll(async () => {
    await connection?.dropDatabase().catch(() => undefined);
    await moduleRef?.close();
  });

  it('creates the plain (non-unique) index on contacts.name at startup', async () => {
    const indexes = await connection.collection('contacts').indexes();
    const byName = indexes.find((i) => i.name === 'name_1');
    expect(byName).toMatchObject({ key: { name: 1 } });
    expect(byName?.unique).toBeFalsy();
    await contacts.create([{ name: 'Sam' }, { name: 'Sam' }]);
    expect(await contacts.countDocuments({ name: 'Sam' })).toBe(2);
  });

  it('stores contacts and schedule entries in the collections the AI uses, with defaults and timestamps', async () => {
    const contact = await contacts.create({
      name: 'Ana',
      phones: ['+351910000000'],
    });
    const entry = await schedule.create({
      title: 'Dentist',
      start: new Date('2025-03-01T09:00:00Z'),
      contactId: contact._id,
    });
    const raw = await connection
      .collection('schedule')
      .findOne({ _id: entry._id });
    expect(raw).toMatchObject({
      title: 'Dentist',
      allDay: false,
      status: 'confirmed',
      contactId: contact._id,
    });
    expect(raw?.['createdAt']).toBeInstanceOf(Date);
    expect(
      await connection.collection('contacts').countDocuments({ name: 'Ana' }),
    ).toBe(1);
  });

  it('refuses a schedule status outside confirmed, tentative, cancelled, done', async () => {
    await expect(
      schedule.create({ title: 'x', start: new Date(), status: 'maybe' }),
    ).rejects.toThrow(/status/);
  });

  it.each([
    ['master', OwnerProfileSchema],
    ['contacts', ContactSchema],
    ['schedule', ScheduleEntrySchema],
  ] as Array<[string, Schema]>)(
    'documents every field of %s in the default dbSchema',
    (collection, schema) => {
      const section = DEFAULT_DB_SCHEMA_DOC.split('### ').find((s) =>
        s.startsWith(`${collection} `),
      );
      expect(section).toBeDefined();
      for (const path of Object.keys(schema.paths).filter((p) => p !== '_id')) {
        expect(section).toMatch(
          new RegExp(`^\\| (?:[\\w, ]*\\b)?${path}\\b`, 'm'),
        );
      }
    },
  );
});

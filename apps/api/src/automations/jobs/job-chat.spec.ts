import { Types, type mongo } from 'mongoose';
import {
  watchedTestDatabase,
  type WatchedTestDatabase,
} from '../../../test/support/test-database';
import { MAX_CHATS_PER_QUERY, OtherJobsOfChat } from './job-chat';

describe('OtherJobsOfChat (whether another job points at a chat, asked together)', () => {
  let database: WatchedTestDatabase;
  let jobs: mongo.Collection;
  const finds = () => database.count('find');
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  const id = () => new Types.ObjectId();

  beforeAll(async () => {
    database = await watchedTestDatabase('test_job_chat');
    jobs = database.db.collection('cronjobs') as unknown as mongo.Collection;
  });

  afterAll(() => database.close());

  beforeEach(async () => {
    await jobs.deleteMany({});
    database.commands.length = 0;
  });

  it('answers each question as a countDocuments of its own would, from one query for the questions of one tick', async () => {
    const [c1, c2, c3, c4, c5] = [id(), id(), id(), id(), id()];
    const [a, b, c, e, g] = [id(), id(), id(), id(), id()];
    await jobs.insertMany([
      { _id: a, chatId: c1 },
      { _id: b, chatId: c1 },
      { _id: c, chatId: c2 },
      // A chat id stored as text (db_query) is not the ObjectId: `{ chatId }` does not match it either.
      { _id: id(), chatId: c4.toHexString() },
      { _id: e, chatId: c4 },
      // A job whose _id is not an ObjectId.
      { _id: 'f' as unknown as Types.ObjectId, chatId: c5 },
      { _id: id(), chatId: null },
    ]);
    const cases: Array<[Types.ObjectId, unknown]> = [
      [c1, a],
      [c1, b],
      [c2, c],
      [c3, id()],
      [c4, e],
      [c5, 'f'],
      [c5, g],
      [c2, id()],
    ];
    const expected = await Promise.all(
      cases.map(
        async ([chatId, jobId]) =>
          (await jobs.countDocuments({
            chatId,
            _id: { $ne: jobId as Types.ObjectId },
          })) > 0,
      ),
    );
    expect(expected).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
      true,
      true,
    ]);

    database.commands.length = 0;
    const other = new OtherJobsOfChat(() => jobs);
    const answers = await Promise.all(
      cases.map(([chatId, jobId]) => other.has(chatId, jobId)),
    );
    expect(answers).toEqual(expected);
    expect(finds()).toBe(1);
    expect(database.count('aggregate')).toBe(0);
  });

  it('asks at once when idle, and the questions asked while a query is out together in the next', async () => {
    const chat = id();
    const job = id();
    await jobs.insertOne({ _id: job, chatId: chat });
    database.commands.length = 0;
    const other = new OtherJobsOfChat(() => jobs);

    expect(await other.has(chat, job)).toBe(false);
    expect(finds()).toBe(1);

    database.commands.length = 0;
    const first = other.has(chat, id());
    await tick();
    // Asked while the first query is out: one more query for all three.
    const rest = [
      other.has(chat, job),
      other.has(id(), job),
      other.has(chat, id()),
    ];
    expect(await Promise.all([first, ...rest])).toEqual([
      true,
      false,
      false,
      true,
    ]);
    expect(finds()).toBe(2);
  });

  it(`asks about at most ${MAX_CHATS_PER_QUERY} questions in one query`, async () => {
    const chat = id();
    await jobs.insertOne({ _id: id(), chatId: chat });
    database.commands.length = 0;
    const other = new OtherJobsOfChat(() => jobs);
    const answers = await Promise.all(
      Array.from({ length: MAX_CHATS_PER_QUERY + 1 }, () =>
        other.has(chat, id()),
      ),
    );
    expect(answers.every(Boolean)).toBe(true);
    expect(finds()).toBe(2);
  });

  it("rejects each question of a failed query with the database's error, and answers the next ones", async () => {
    let broken = true;
    const other = new OtherJobsOfChat(() => {
      if (broken) throw new Error('the database is down');
      return jobs;
    });
    const failed = await Promise.allSettled([
      other.has(id(), id()),
      other.has(id(), id()),
    ]);
    expect(failed.map((result) => result.status)).toEqual([
      'rejected',
      'rejected',
    ]);
    expect((failed[0] as PromiseRejectedResult).reason as Error).toHaveProperty(
      'message',
      'the database is down',
    );

    broken = false;
    expect(await other.has(id(), id())).toBe(false);
  });
});

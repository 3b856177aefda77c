import { Types, type mongo } from 'mongoose';
import type { ChatsService } from '../../chats/chats.service';
import { GroupCommit, firstOf } from '../../database/group-commit';
import type { CronJobRecord } from './schemas/cron-job.schema';

/** Chats asked about per query at most (a bound on one `$in`). */
export const MAX_CHATS_PER_QUERY = 100;

interface PendingQuestion {
  chatId: Types.ObjectId;
  jobId: unknown;
  resolve: (shared: boolean) => void;
  reject: (error: Error) => void;
}

/**
 * Whether a job other than the one asking points at a chat: every run asks before it writes to
 * its job's chat. Asked with one `countDocuments` a run, 100 jobs due in the same minute made 100
 * queries that FerretDB answers one after another, each by reading every job, and the last run's
 * turn began ~1.3 s after the minute (stop 46). As `GroupedInserts` does for inserts, one query is
 * out at a time and the questions asked meanwhile go out together in the next: the runs a minute
 * starts ask in one query. An idle app asks at once, one query per question as before.
 */
export class OtherJobsOfChat {
  private readonly queries = new GroupCommit<PendingQuestion>(
    (batch) => this.read(batch),
    firstOf(MAX_CHATS_PER_QUERY),
  );

  constructor(private readonly jobs: () => mongo.Collection) {}

  /** True when a stored job other than `jobId` has `chatId` as its chat; rejects with the database's error. */
  has(chatId: Types.ObjectId, jobId: unknown): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) =>
      this.queries.add({ chatId, jobId, resolve, reject }),
    );
  }

  private async read(batch: PendingQuestion[]): Promise<void> {
    try {
      const chatIds = [
        ...new Map(batch.map((q) => [q.chatId.toHexString(), q.chatId])),
      ].map(([, id]) => id);
      // The same match as `{ chatId }` per chat: an ObjectId equal to it (a string is not).
      const jobs = await this.jobs()
        .find(
          { chatId: { $in: chatIds } },
          { projection: { _id: 1, chatId: 1 } },
        )
        .toArray();
      for (const question of batch)
        question.resolve(
          jobs.some(
            (job) =>
              job['chatId'] instanceof Types.ObjectId &&
              job['chatId'].equals(question.chatId) &&
              !sameId(job._id, question.jobId),
          ),
        );
    } catch (error) {
      for (const question of batch) question.reject(error as Error);
    }
  }
}

/** `_id` equality as the database sees it: ObjectIds by value, anything else as itself. */
function sameId(a: unknown, b: unknown): boolean {
  if (a instanceof Types.ObjectId || b instanceof Types.ObjectId)
    return (
      a instanceof Types.ObjectId && b instanceof Types.ObjectId && a.equals(b)
    );
  return a === b;
}

/**
 * The job's chat if it is really the job's own: a cron chat no other job
 * points at. A chatId written through db_query before its writes were checked
 * could name any chat; such a job gets a new chat at its next run, and deleting
 * it leaves the other chat alone.
 */
export async function jobOwnChat(
  otherJobs: OtherJobsOfChat,
  chats: ChatsService,
  job: Pick<CronJobRecord, '_id' | 'chatId'>,
): Promise<Types.ObjectId | null> {
  const chatId: unknown = job.chatId;
  if (!(chatId instanceof Types.ObjectId)) return null;
  if (await otherJobs.has(chatId, job._id)) return null;
  const chat = await chats.get(chatId.toHexString()).catch(() => null);
  return chat?.kind === 'cron' ? chatId : null;
}

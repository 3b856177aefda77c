import { Types, type mongo } from 'mongoose';
import type { ChatsService } from '../../chats/chats.service';
import type { CronJobRecord } from './schemas/cron-job.schema';

/**
 * The job's chat if it is really the job's own: a cron chat no other job
 * points at. A chatId written through db_query before its writes were checked
 * could name any chat; such a job gets a new chat at its next run, and deleting
 * it leaves the other chat alone.
 */
export async function jobOwnChat(
  jobs: mongo.Collection,
  chats: ChatsService,
  job: Pick<CronJobRecord, '_id' | 'chatId'>,
): Promise<Types.ObjectId | null> {
  const chatId: unknown = job.chatId;
  if (!(chatId instanceof Types.ObjectId)) return null;
  const shared = await jobs.countDocuments({ chatId, _id: { $ne: job._id } });
  if (shared > 0) return null;
  const chat = await chats.get(chatId.toHexString()).catch(() => null);
  return chat?.kind === 'cron' ? chatId : null;
}

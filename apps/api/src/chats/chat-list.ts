import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { StartUpWork } from '../database/start-up-work';
import { ChatRecord } from './schemas/chat.schema';

/** Changes kept for a read under way (or one that began just after them): far more than a read can miss. */
const JOURNAL_LIMIT = 2_000;

type Change =
  | { kind: 'created'; chat: ChatRecord }
  | { kind: 'updated'; chatId: string; fields: Partial<ChatRecord> }
  | { kind: 'deleted'; chatId: string };

/**
 * Every chat document, in memory, so that the chat list and its search (`GET /api/chats`) read no
 * database: FerretDB took ~270 ms to hand over 1,000 chats, on every request. The database stays the
 * record. The copy is read once after the server listens (a list before then waits for that read),
 * and again after a restored backup. The chats module is the only writer of `chats` (the AI may only
 * read it) and reports each write through ChatCache (`created`, `updated`, `deleted`), which changes
 * the copy at once: a renamed chat is found by its new name, a deleted one is gone, as soon as the
 * request that did it returns.
 *
 * A write reported while the database is being read may or may not be in what the read returns (a turn
 * reports its chat's new activity time before writing it), so the recent changes are kept in a short
 * journal and applied again on top of every read: each is a `$set` of fields, a creation or a deletion,
 * so applying one twice, in order, changes nothing.
 */
@Injectable()
export class ChatList implements OnApplicationBootstrap {
  private chats: Map<string, ChatRecord> | null = null;
  private loading: Promise<Map<string, ChatRecord>> | null = null;
  /** Bumped by a restore: a read begun before it keeps nothing. */
  private generation = 0;
  private readonly journal: Change[] = [];
  private readonly logger = new Logger(ChatList.name);

  constructor(
    @InjectModel(ChatRecord.name) private readonly model: Model<ChatRecord>,
    private readonly startUp: StartUpWork,
  ) {}

  onApplicationBootstrap(): void {
    this.startUp.afterListening('read the chat list', () => this.warm());
  }

  /** A restored backup replaced every chat: read them again (the restore's caller waits for it). */
  @OnEvent('backup.restored')
  async reloadAfterRestore(): Promise<void> {
    this.generation++;
    this.chats = null;
    this.loading = null;
    this.journal.length = 0;
    await this.warm();
  }

  /** Every chat document as stored (lean; never changed in place: a write replaces the object). */
  async all(): Promise<readonly ChatRecord[]> {
    const chats = this.chats ?? (await this.load());
    return [...chats.values()];
  }

  created(chat: ChatRecord): void {
    this.apply({ kind: 'created', chat });
  }

  updated(chatId: string, fields: Partial<ChatRecord>): void {
    this.apply({ kind: 'updated', chatId, fields });
  }

  deleted(chatId: string): void {
    this.apply({ kind: 'deleted', chatId });
  }

  private apply(change: Change): void {
    this.journal.push(change);
    if (this.journal.length > JOURNAL_LIMIT)
      this.journal.splice(0, this.journal.length - JOURNAL_LIMIT);
    if (this.chats) applyChange(this.chats, change);
  }

  private async warm(): Promise<void> {
    await this.load().catch((error: Error) =>
      this.logger.warn(
        `Could not read the chats (read again on the next list): ${error.message}`,
      ),
    );
  }

  private load(): Promise<Map<string, ChatRecord>> {
    if (this.chats) return Promise.resolve(this.chats);
    if (!this.loading) {
      const loading = this.read(this.generation);
      this.loading = loading;
      const settled = () => {
        if (this.loading === loading) this.loading = null;
      };
      loading.then(settled, settled);
    }
    return this.loading;
  }

  private async read(generation: number): Promise<Map<string, ChatRecord>> {
    const stored = await this.model.find().lean<ChatRecord[]>().exec();
    const chats = new Map<string, ChatRecord>();
    for (const chat of stored) chats.set(String(chat._id), chat);
    for (const change of this.journal) applyChange(chats, change);
    // A restore came in meanwhile: its own read is the one to keep.
    if (generation !== this.generation) return this.load();
    this.chats = chats;
    return chats;
  }
}

function applyChange(chats: Map<string, ChatRecord>, change: Change): void {
  switch (change.kind) {
    case 'created': {
      const id = change.chat._id.toHexString();
      if (!chats.has(id)) chats.set(id, change.chat);
      return;
    }
    case 'updated': {
      const chat = chats.get(change.chatId);
      if (chat) chats.set(change.chatId, { ...chat, ...change.fields });
      return;
    }
    case 'deleted':
      chats.delete(change.chatId);
  }
}

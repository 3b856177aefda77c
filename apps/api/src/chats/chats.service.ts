import {
  BadRequestException,
  Injectable,
  Logger,
  NotFoundException,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model, type Schema } from 'mongoose';
import {
  CHAT_SEARCH_MAX_RESULTS,
  type ChatKind,
  type ChatListQuery,
  type ChatMessage,
  type ChatSummary,
  type MessageDelivery,
  type UpdateChatRequest,
} from '@metatronos/shared-types';
import { DEFAULT_MODE } from '../ai-tools/ai-tool';
import { ChatModes } from './chat-modes';
import { schemaProblems } from '../database/stored-document-shape';
import { Clock } from '../clock/clock';
import { AppEventBus } from '../events/app-event-bus';
import { TurnError } from '../llm/llm-errors';
import { LlmRunner } from '../llm/llm-runner';
import { ChatCache } from './chat-cache';
import { ChatWrites } from './chat-writes';
import { MessageWrites } from './message-writes';
import { ChatList } from './chat-list';
import { ChatSearchIndex, escapeRegExp } from './chat-search-index';
import { ChatVersions } from './chat-versions';
import { toChatMessage, toChatSummary } from './chat-views';
import { ChatRecord, DEFAULT_CHAT_TITLE } from './schemas/chat.schema';
import { MessageRecord, ON_PATH } from './schemas/message.schema';

/** Where running replies are tracked; ChatReplyService implements it. */
export abstract class RunningReplies {
  abstract isRunning(chatId: string): boolean;
  /** Cancels the chat's running reply and resolves once it has ended. */
  abstract stopAndWait(chatId: string): Promise<boolean>;
  /**
   * Holds the chat's shown path while the owner's mode switch is written, so no turn or version switch starts
   * meanwhile (they answer 409); throws a 409 when one of them is under way. Call the returned function to free it.
   */
  abstract holdPath(chatId: string): () => void;
}

export const DEFAULT_MESSAGES_PAGE = 50;

/** Characters kept before and after the match in a search snippet. */
const SNIPPET_BEFORE = 40;
const SNIPPET_AFTER = 80;

/**
 * The words around the first `needle` in `text` (any letter case), whitespace folded to single spaces and "…"
 * where the text was cut, or null when `text` does not hold it.
 */
export function searchSnippet(text: string, needle: string): string | null {
  const folded = text.replace(/\s+/g, ' ').trim();
  const wanted = needle.replace(/\s+/g, ' ').trim().toLocaleLowerCase();
  if (!wanted) return null;
  const at = folded.toLocaleLowerCase().indexOf(wanted);
  if (at < 0) return null;
  let start = Math.max(0, at - SNIPPET_BEFORE);
  let end = Math.min(folded.length, at + wanted.length + SNIPPET_AFTER);
  // Cut at a space rather than inside a word.
  if (start > 0) {
    const space = folded.indexOf(' ', start);
    if (space >= 0 && space < at) start = space + 1;
  }
  if (end < folded.length) {
    const space = folded.lastIndexOf(' ', end);
    if (space > at + wanted.length) end = space;
  }
  return `${start > 0 ? '…' : ''}${folded.slice(start, end)}${end < folded.length ? '…' : ''}`;
}

/** Chats and their stored messages (REST side). */
@Injectable()
export class ChatsService {
  private readonly logger = new Logger(ChatsService.name);
  private readonly reportedMalformed = new Set<string>();
  /** Chats whose shape was checked: the list's records are replaced, never changed, by a write. */
  private readonly checkedChats = new WeakMap<ChatRecord, boolean>();

  constructor(
    @InjectModel(ChatRecord.name) private readonly chats: Model<ChatRecord>,
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    private readonly running: RunningReplies,
    private readonly cache: ChatCache,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
    private readonly modes: ChatModes,
    private readonly runner: LlmRunner,
    private readonly searchIndex: ChatSearchIndex,
    private readonly versions: ChatVersions,
    private readonly chatList: ChatList,
    private readonly chatWrites: ChatWrites,
    private readonly messageWrites: MessageWrites,
  ) {}

  /**
   * The chats of one view (archived or not), pinned first, then the most recently active. With `q`: only the
   * chats whose title or any message holds it (case-insensitive), at most CHAT_SEARCH_MAX_RESULTS of them.
   */
  async list(query: ChatListQuery = {}): Promise<ChatSummary[]> {
    const archived = query.archived === true;
    const needle = query.q?.trim();
    // The chats are few and kept in memory (ChatList): the view is chosen here.
    const [all, matching] = await Promise.all([
      this.chatList.all(),
      needle ? this.chatsMentioning(needle) : new Set<string>(),
    ]);
    const lower = needle?.toLocaleLowerCase();
    // A chat stored with the wrong shape is left out (and reported), never a list that fails for good;
    // a search checks the shape of the chats it found only.
    let chats = all.filter(
      (chat) =>
        (lower === undefined ||
          matching.has(String(chat._id)) ||
          (typeof chat.title === 'string' &&
            chat.title.toLocaleLowerCase().includes(lower))) &&
        this.wellFormedChat(chat) &&
        (chat.archived === true) === archived,
    );
    if (needle) chats = chats.sort(listOrder).slice(0, CHAT_SEARCH_MAX_RESULTS);
    else chats.sort(listOrder);
    const summaries = chats.map((chat) =>
      toChatSummary(chat, this.running.isRunning(chat._id.toHexString())),
    );
    if (!needle) return summaries;
    for (const summary of summaries) {
      if (!matching.has(summary.id)) continue;
      const snippet = await this.snippetIn(summary.id, needle);
      if (snippet) summary.snippet = snippet;
    }
    return summaries;
  }

  /**
   * The first message of the chat holding `needle`, cut around it: from the search index (the message as
   * written, never its lower-cased text), else one read by the indexed `chatId`.
   */
  private async snippetIn(
    chatId: string,
    needle: string,
  ): Promise<string | null> {
    const indexed = this.searchIndex.messageHolding(chatId, needle);
    if (indexed !== undefined)
      return indexed === null ? null : searchSnippet(indexed, needle);
    const records = await this.messages
      .find({ chatId: new Types.ObjectId(chatId), ...ON_PATH }, { content: 1 })
      .sort({ _id: 1 })
      .lean<Pick<MessageRecord, 'content'>[]>()
      .exec();
    for (const record of records) {
      const snippet = searchSnippet(record.content ?? '', needle);
      if (snippet) return snippet;
    }
    return null;
  }

  /**
   * Ids of the chats with a message holding `needle`: from the in-memory index, or (when the messages are
   * too many to keep) one query whose answer is only chat ids, though the database reads every message.
   */
  private async chatsMentioning(needle: string): Promise<Set<string>> {
    const indexed = await this.searchIndex.chatsMentioning(needle);
    if (indexed) return indexed;
    const ids: unknown[] = await this.messages
      .distinct('chatId', {
        content: { $regex: escapeRegExp(needle), $options: 'i' },
        ...ON_PATH,
      })
      .exec();
    return new Set(ids.map((id) => String(id)));
  }

  async create(title?: string, kind: ChatKind = 'chat'): Promise<ChatSummary> {
    const record = await this.insertChat(title, kind);
    const summary = toChatSummary(record, false);
    this.announceCreated(summary.id);
    return summary;
  }

  /**
   * A chat for a first message that is about to be sent, not announced yet: `announceCreated()` once the
   * message was accepted, `discard()` when it was refused, so no empty chat is left behind.
   */
  async createQuietly(id?: Types.ObjectId): Promise<ChatRecord> {
    return this.insertChat(undefined, 'chat', id);
  }

  announceCreated(chatId: string): void {
    this.events.emit('chats.changed', {
      chatId,
      change: 'created',
      at: this.clock.now().toISOString(),
    });
  }

  /** Removes a chat made by `createQuietly()` whose first message was refused (it has no messages). */
  async discard(chatId: string): Promise<void> {
    const id = new Types.ObjectId(chatId);
    await this.chatWrites.run(id, () =>
      this.chats.deleteOne({ _id: id }).exec(),
    );
    this.cache.deleted(chatId);
  }

  private async insertChat(
    title: string | undefined,
    kind: ChatKind,
    id?: Types.ObjectId,
  ): Promise<ChatRecord> {
    const now = this.clock.now();
    const named = title?.trim();
    const created = await this.chats.create({
      ...(id ? { _id: id } : {}),
      title: named || DEFAULT_CHAT_TITLE,
      autoTitle: !named,
      kind,
      mode: DEFAULT_MODE,
      accountId: null,
      pinned: false,
      archived: false,
      model: null,
      createdAt: now,
      updatedAt: now,
    });
    const record = created.toObject<ChatRecord>();
    this.cache.created(record);
    return record;
  }

  /**
   * `PATCH /api/chats/:id`: title, pin, archive, the chat's model and/or the owner's
   * mode switch. Everything is checked before anything is written. Pinning and archiving do not count as
   * activity (the chat keeps its place by time); a rename does. A mode switch holds the chat's path while it is
   * written (409 while a reply runs or another version is being shown).
   */
  async update(
    chatId: string,
    request: UpdateChatRequest,
  ): Promise<ChatSummary> {
    const current = await this.get(chatId);
    if (request.mode !== undefined && !this.modes.hasMode(request.mode))
      throw new BadRequestException(
        `mode must be one of: ${this.modes.names().join(', ')} (got "${request.mode.slice(0, 32)}")`,
      );
    const fields: Partial<ChatRecord> = {};
    if (request.title !== undefined) {
      fields.title = request.title.trim();
      fields.autoTitle = false;
      fields.updatedAt = this.clock.now();
    }
    if (request.pinned !== undefined) fields.pinned = request.pinned;
    if (request.archived !== undefined) fields.archived = request.archived;
    if (request.model !== undefined) {
      const model = request.model?.trim() || null;
      if (model) await this.checkModel(model);
      fields.model = model;
    }
    if (Object.keys(fields).length === 0 && request.mode === undefined)
      throw new BadRequestException(
        'Nothing to change: send title, mode, pinned, archived or model',
      );
    const release =
      request.mode !== undefined ? this.running.holdPath(chatId) : undefined;
    try {
      return await this.write(chatId, current, request, fields);
    } finally {
      release?.();
    }
  }

  /** Writes a checked change: the fields first, then the mode switch as its own message. */
  private async write(
    chatId: string,
    current: ChatRecord,
    request: UpdateChatRequest,
    fields: Partial<ChatRecord>,
  ): Promise<ChatSummary> {
    let chat: ChatRecord = current;
    if (Object.keys(fields).length > 0) {
      const updated = await this.chatWrites.run(current._id, () =>
        this.chats
          .findByIdAndUpdate(current._id, { $set: fields }, { new: true })
          .lean<ChatRecord>()
          .exec(),
      );
      if (!updated) throw new NotFoundException(`Chat '${chatId}' not found`);
      chat = updated;
      this.cache.updateChat(chatId, fields);
      this.events.emit('chats.changed', {
        chatId,
        change: request.title !== undefined ? 'renamed' : 'updated',
        at: this.clock.now().toISOString(),
      });
    }
    if (
      request.mode !== undefined &&
      request.mode !== toChatSummary(chat, false).mode
    ) {
      await this.modes.recordSwitch(chat, request.mode, 'owner');
      chat = await this.get(chatId);
    }
    return toChatSummary(chat, this.running.isRunning(chatId));
  }

  /** A chat's model must route to a configured provider, as the primary model must. */
  private async checkModel(model: string): Promise<void> {
    try {
      await this.runner.resolveModel(model);
    } catch (error) {
      if (error instanceof TurnError)
        throw new BadRequestException(`model: ${error.message}`);
      throw error;
    }
  }

  get(chatId: string): Promise<ChatRecord> {
    return this.cache.get(chatId);
  }

  rename(chatId: string, title: string): Promise<ChatSummary> {
    return this.update(chatId, { title });
  }

  /** Records where an assistant reply went besides the chat (a WhatsApp auto-reply), and tells the console. */
  async setDelivery(
    chatId: string,
    messageId: string,
    delivery: Omit<MessageDelivery, 'at'>,
  ): Promise<void> {
    if (!Types.ObjectId.isValid(messageId)) return;
    const at = this.clock.now().toISOString();
    // Grouped with the marks other contacts' replies make meanwhile: one command for many under load.
    await this.messageWrites.set(
      messageId,
      { _id: new Types.ObjectId(messageId), role: 'assistant' },
      { delivery: { ...delivery, at } },
    );
    this.events.emit('chats.changed', { chatId, change: 'delivery', at });
  }

  /** Deletes the chat and every message in it; a running reply is stopped first. */
  async remove(chatId: string): Promise<void> {
    const chat = await this.get(chatId);
    await this.running.stopAndWait(chatId);
    await this.messages.deleteMany({ chatId: chat._id }).exec();
    await this.chatWrites.run(chat._id, () =>
      this.chats.deleteOne({ _id: chat._id }).exec(),
    );
    this.cache.deleted(chatId);
    this.events.emit('chats.changed', {
      chatId,
      change: 'deleted',
      at: this.clock.now().toISOString(),
    });
  }

  /**
   * A page of the shown path's messages, oldest first: the newest `limit` ones, or those just before `before`.
   * A message with other versions carries `versions`.
   */
  async messagesPage(
    chatId: string,
    limit = DEFAULT_MESSAGES_PAGE,
    before?: string,
  ): Promise<ChatMessage[]> {
    const chat = await this.get(chatId);
    const read = (shownOnly: boolean) => {
      // A chat without versions keeps the plain query (FerretDB pushes the limit down only with the whole filter).
      const filter: Record<string, unknown> = {
        chatId: chat._id,
        ...(shownOnly ? ON_PATH : {}),
      };
      if (before) filter['_id'] = { $lt: new Types.ObjectId(before) };
      return this.messages
        .find(filter)
        .sort({ _id: -1 })
        .limit(limit)
        .lean<MessageRecord[]>()
        .exec();
    };
    let page = await read(chat.forked === true);
    // The chat's mark was lost (a concurrent write of the chat document): its hidden versions still stay hidden.
    const forked = chat.forked || page.some((message) => message.hiddenWith);
    if (!chat.forked && forked) page = await read(true);
    const views = page
      .reverse()
      .filter((message) => this.wellFormed(message, 'message'))
      .map(toChatMessage);
    if (!forked || !views.length) return views;
    const tree = await this.versions.tree(chat);
    for (const view of views) {
      const versions = tree.versionInfo(view.id);
      if (versions) view.versions = versions;
    }
    return views;
  }

  private wellFormedChat(chat: ChatRecord): boolean {
    let ok = this.checkedChats.get(chat);
    if (ok === undefined) {
      ok = this.wellFormed(chat);
      this.checkedChats.set(chat, ok);
    }
    return ok;
  }

  /** Whether a stored chat or message can be shown; a malformed one is reported once and left out. */
  private wellFormed(
    doc: ChatRecord | MessageRecord,
    kind: 'chat' | 'message' = 'chat',
  ): boolean {
    const schema: Schema =
      kind === 'chat' ? this.chats.schema : this.messages.schema;
    const problems = schemaProblems(
      schema,
      doc as unknown as Record<string, unknown>,
    );
    if (!problems.length) return true;
    const id = `${kind} ${String(doc._id)}`;
    if (!this.reportedMalformed.has(id)) {
      this.reportedMalformed.add(id);
      this.logger.warn(
        `Left out ${id}, stored with the wrong shape: ${problems.join('; ')}`,
      );
    }
    return false;
  }
}

/** Pinned first, then the most recently active (newest id on a tie). */
function listOrder(a: ChatRecord, b: ChatRecord): number {
  const pinned = Number(b.pinned === true) - Number(a.pinned === true);
  if (pinned) return pinned;
  const time = b.updatedAt.getTime() - a.updatedAt.getTime();
  if (time) return time;
  return b._id.toHexString().localeCompare(a._id.toHexString());
}

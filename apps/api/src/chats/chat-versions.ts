import { Injectable, Logger } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import type { MessageVersions } from '@metatronos/shared-types';
import { ChatCache } from './chat-cache';
import { ChatWrites } from './chat-writes';
import { ChatRecord } from './schemas/chat.schema';
import { MessageRecord, ON_PATH } from './schemas/message.schema';

/** What the version tree needs of a message. */
export type MessageNode = Pick<
  MessageRecord,
  '_id' | 'parentId' | 'hiddenWith'
>;

const NODE_FIELDS = { _id: 1, parentId: 1, hiddenWith: 1 } as const;

/**
 * A chat's messages as a tree (oldest first in). The shown path is the messages with no `hiddenWith`, in `_id`
 * order: each message is newer than the one it follows, and hiding always takes a message with everything
 * shown after it, so the shown ones are one line. A shown message without `parentId` follows the shown message
 * before it; a hidden one always has its `parentId` (written when it was hidden). Versions are the messages
 * that follow the same one.
 */
export class VersionTree {
  private readonly parentOf = new Map<string, string>();
  private readonly children = new Map<string, string[]>();
  private readonly byId = new Map<string, MessageNode>();
  /** The shown path, oldest first. */
  readonly path: MessageNode[] = [];

  constructor(chatId: Types.ObjectId, nodes: readonly MessageNode[]) {
    let previous = chatId.toHexString();
    const sorted = [...nodes].sort((a, b) =>
      a._id.toHexString().localeCompare(b._id.toHexString()),
    );
    for (const node of sorted) {
      const id = node._id.toHexString();
      this.byId.set(id, node);
      const shown = !node.hiddenWith;
      const parent = node.parentId ? node.parentId.toHexString() : previous;
      this.parentOf.set(id, parent);
      const siblings = this.children.get(parent);
      if (siblings) siblings.push(id);
      else this.children.set(parent, [id]);
      if (shown) {
        this.path.push(node);
        previous = id;
      }
    }
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  isShown(id: string): boolean {
    const node = this.byId.get(id);
    return !!node && !node.hiddenWith;
  }

  /** The message `id` follows (the chat's id for a first message). */
  parent(id: string): string | undefined {
    return this.parentOf.get(id);
  }

  /** Every version of the message `id` (itself included), oldest first. */
  versionsOf(id: string): string[] {
    const parent = this.parentOf.get(id);
    return parent === undefined ? [] : (this.children.get(parent) ?? []);
  }

  /** `{ index, count }` for a message with more than one version, else null. */
  versionInfo(id: string): MessageVersions | null {
    const versions = this.versionsOf(id);
    if (versions.length < 2) return null;
    return { index: versions.indexOf(id) + 1, count: versions.length };
  }

  /** The shown message among `id`'s versions, or null when they are all on hidden branches. */
  shownVersion(id: string): string | null {
    return this.versionsOf(id).find((v) => this.isShown(v)) ?? null;
  }

  /** The shown messages from `id` on (it included), oldest first; empty when `id` is not shown. */
  shownFrom(id: string): MessageNode[] {
    const at = this.path.findIndex((node) => node._id.toHexString() === id);
    return at < 0 ? [] : this.path.slice(at);
  }
}

/**
 * Keeps a chat's earlier versions: an edit or a regenerate hides the message it replaces with everything shown
 * after it (nothing is deleted), and switching brings a hidden branch back. Callers hold the chat (no reply
 * running, ChatReplyService's claim) while these write.
 */
@Injectable()
export class ChatVersions {
  private readonly logger = new Logger(ChatVersions.name);

  constructor(
    @InjectModel(ChatRecord.name) private readonly chats: Model<ChatRecord>,
    @InjectModel(MessageRecord.name)
    private readonly messages: Model<MessageRecord>,
    private readonly cache: ChatCache,
    private readonly chatWrites: ChatWrites,
  ) {}

  /** The chat's tree, read in one query by the indexed `chatId`. */
  async tree(chat: ChatRecord): Promise<VersionTree> {
    const nodes = await this.messages
      .find({ chatId: chat._id }, NODE_FIELDS)
      .lean<MessageNode[]>()
      .exec();
    return new VersionTree(chat._id, nodes);
  }

  /**
   * Replaces the shown message `replacedId` by `records` (its new version first, then what follows it):
   * `replacedId` and every shown message after it leave the path (kept, `hiddenWith` = `replacedId`), the
   * records are stored following `replacedId`'s parent. Returns the ids whose visibility changed. On a
   * failure the steps done are undone as far as possible, and it throws.
   */
  async fork(
    chat: ChatRecord,
    tree: VersionTree,
    replacedId: string,
    records: MessageRecord[],
  ): Promise<string[]> {
    const parent = tree.parent(replacedId);
    const leaving = tree.shownFrom(replacedId);
    if (parent === undefined || !leaving.length)
      throw new Error(`Message ${replacedId} is not on the shown path`);
    const [first, ...rest] = records;
    const stored: MessageRecord[] = [
      { ...first, parentId: new Types.ObjectId(parent) },
      ...rest,
    ];
    await this.hide(chat._id, tree, leaving, new Types.ObjectId(replacedId));
    try {
      await this.messages.collection.insertMany(stored);
    } catch (error) {
      await this.show(chat._id, new Types.ObjectId(replacedId)).catch(
        (undo: Error) =>
          this.logger.error(`Could not undo a hidden branch: ${undo.message}`),
      );
      throw error;
    }
    await this.markForked(chat);
    this.cache.forget(chat._id.toHexString());
    return [
      ...leaving.map((node) => node._id.toHexString()),
      ...stored.map((record) => record._id.toHexString()),
    ];
  }

  /**
   * Shows version `targetId` in place of the shown `currentId` (its sibling): the current one leaves the path
   * with everything after it, and what was shown after the target when it left comes back with it. Returns the
   * ids whose visibility changed.
   */
  async switchTo(
    chat: ChatRecord,
    tree: VersionTree,
    currentId: string,
    targetId: string,
  ): Promise<string[]> {
    const leaving = tree.shownFrom(currentId);
    const target = new Types.ObjectId(targetId);
    const returning = await this.messages
      .find({ chatId: chat._id, hiddenWith: target }, { _id: 1 })
      .lean<Array<Pick<MessageRecord, '_id'>>>()
      .exec();
    await this.hide(chat._id, tree, leaving, new Types.ObjectId(currentId));
    try {
      await this.show(chat._id, target);
    } catch (error) {
      await this.show(chat._id, new Types.ObjectId(currentId)).catch(
        (undo: Error) =>
          this.logger.error(`Could not undo a version switch: ${undo.message}`),
      );
      throw error;
    }
    this.cache.forget(chat._id.toHexString());
    return [
      ...leaving.map((node) => node._id.toHexString()),
      ...returning.map((record) => record._id.toHexString()),
    ];
  }

  /** Takes `nodes` off the path, each keeping the message it follows. */
  private async hide(
    chatId: Types.ObjectId,
    tree: VersionTree,
    nodes: MessageNode[],
    hiddenWith: Types.ObjectId,
  ): Promise<void> {
    // One write per message that has no parent stored yet (a branch's first hiding), then one for all.
    for (const node of nodes) {
      if (node.parentId) continue;
      const parent = tree.parent(node._id.toHexString());
      if (!parent) continue;
      await this.messages.collection.updateOne(
        { _id: node._id },
        { $set: { parentId: new Types.ObjectId(parent) } },
      );
    }
    // Everything shown from the first on: a message stored meanwhile (a call's words) leaves with its branch.
    await this.messages.collection.updateMany(
      { chatId, _id: { $gte: nodes[0]._id }, ...ON_PATH },
      { $set: { hiddenWith } },
    );
  }

  private async show(
    chatId: Types.ObjectId,
    hiddenWith: Types.ObjectId,
  ): Promise<void> {
    await this.messages.collection.updateMany(
      { chatId, hiddenWith },
      { $unset: { hiddenWith: '' } },
    );
  }

  private async markForked(chat: ChatRecord): Promise<void> {
    if (chat.forked) return;
    await this.chatWrites.run(chat._id, () =>
      this.chats.collection.updateOne(
        { _id: chat._id },
        { $set: { forked: true } },
      ),
    );
    this.cache.updateChat(chat._id.toHexString(), { forked: true });
  }
}

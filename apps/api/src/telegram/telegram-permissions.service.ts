import {
  BadRequestException,
  ConflictException,
  Injectable,
  Logger,
  NotFoundException,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import type {
  CreateTelegramPermissionRequest,
  TelegramPermission,
  UpdateTelegramPermissionRequest,
} from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import { isDuplicateKey } from '../database/duplicate-key';
import { StartUpWork } from '../database/start-up-work';
import { AppEventBus } from '../events/app-event-bus';
import { TelegramPermissionRecord } from './schemas/telegram-permission.schema';

export type TelegramPermissionChangedBy = 'owner' | 'ai' | 'auto-reply';

/** Telegram chat ids are signed 64-bit integers. */
const CHAT_ID = /^-?[1-9]\d{0,19}$/;
const MAX_NAME = 100;

export const TELEGRAM_PERMISSION_NOT_FOUND = 'Permission not found';
export const TELEGRAM_PERMISSION_EXISTS =
  'Permission already exists for this Telegram chat';

function toView(record: TelegramPermissionRecord): TelegramPermission {
  return {
    id: record._id.toHexString(),
    chatId: record.chatId,
    displayName: record.displayName,
    canRead: record.canRead,
    canReply: record.canReply,
    trusted: record.trusted,
    consoleChatId: record.consoleChatId ?? null,
    autoReplyPausedUntil: record.autoReplyPausedUntil
      ? record.autoReplyPausedUntil.toISOString()
      : null,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

/** A chat id as a string, or a message naming the problem. */
export function checkTelegramChatId(value: unknown): string {
  const id = typeof value === 'number' ? String(value) : value;
  if (typeof id !== 'string' || !CHAT_ID.test(id.trim()))
    throw new BadRequestException(
      'chatId must be a Telegram chat id: an integer such as 123456789, or -100… for a group',
    );
  return id.trim();
}

function checkName(value: unknown): string {
  const name =
    typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : '';
  if (!name) throw new BadRequestException('displayName is required');
  if (name.length > MAX_NAME)
    throw new BadRequestException(
      `displayName is at most ${MAX_NAME} characters`,
    );
  return name;
}

/**
 * `telegram_permissions`: which Telegram chats the assistant reads and answers.
 * A chat without a permission (a stranger) is stored and shown to the owner,
 * never answered. Lookups by chat id read an in-memory copy that every write drops.
 */
@Injectable()
export class TelegramPermissionsService implements OnApplicationBootstrap {
  private snapshot: Promise<Map<string, TelegramPermission>> | null = null;
  private generation = 0;
  private indexes: Promise<void> | null = null;
  private readonly logger = new Logger('TelegramPermissions');

  constructor(
    @InjectModel(TelegramPermissionRecord.name)
    private readonly permissions: Model<TelegramPermissionRecord>,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
    private readonly startUp: StartUpWork,
  ) {}

  onApplicationBootstrap(): void {
    // Not held for: the insert that needs the unique index awaits it; reads need no index to be right.
    this.startUp.run('create the Telegram permission indexes', () =>
      this.ensureIndexes(),
    );
  }

  /** autoIndex is off (see DatabaseModule): the unique chat id index is made before the first insert. */
  private ensureIndexes(): Promise<void> {
    this.indexes ??= this.permissions
      .syncIndexes()
      .then(() => undefined)
      .catch((error: Error) => {
        this.indexes = null;
        this.logger.warn(
          `Could not create the Telegram permission indexes: ${error.message}`,
        );
      });
    return this.indexes;
  }

  async list(): Promise<TelegramPermission[]> {
    const all = [...(await this.byChatId()).values()];
    return all.sort(
      (a, b) =>
        a.displayName.localeCompare(b.displayName, undefined, {
          sensitivity: 'base',
        }) || a.chatId.localeCompare(b.chatId),
    );
  }

  async findByChatId(chatId: string): Promise<TelegramPermission | null> {
    return (await this.byChatId()).get(chatId) ?? null;
  }

  /** The permission whose auto-replies live in this console chat. */
  async findByConsoleChatId(
    consoleChatId: string,
  ): Promise<TelegramPermission | null> {
    for (const permission of (await this.byChatId()).values())
      if (permission.consoleChatId === consoleChatId) return permission;
    return null;
  }

  /** Chat ids with canRead (db_query's view of telegram_messages). */
  async readableChatIds(): Promise<string[]> {
    return [...(await this.byChatId()).values()]
      .filter((p) => p.canRead)
      .map((p) => p.chatId);
  }

  async create(
    request: CreateTelegramPermissionRequest,
    by: TelegramPermissionChangedBy,
  ): Promise<TelegramPermission> {
    const chatId = checkTelegramChatId(request.chatId);
    const displayName = checkName(request.displayName);
    await this.ensureIndexes();
    if (await this.findByChatId(chatId))
      throw new ConflictException(TELEGRAM_PERMISSION_EXISTS);
    const now = this.clock.now();
    let record: TelegramPermissionRecord;
    try {
      record = (
        await this.permissions.create({
          chatId,
          displayName,
          canRead: request.canRead ?? false,
          canReply: request.canReply ?? false,
          trusted: request.trusted ?? false,
          consoleChatId: null,
          autoReplyPausedUntil: null,
          createdAt: now,
          updatedAt: now,
        })
      ).toObject();
    } catch (error) {
      if (isDuplicateKey(error))
        throw new ConflictException(TELEGRAM_PERMISSION_EXISTS);
      throw error;
    } finally {
      this.dropSnapshot();
    }
    return this.changed(toView(record), 'created', by);
  }

  async update(
    id: string,
    request: UpdateTelegramPermissionRequest,
    by: TelegramPermissionChangedBy,
  ): Promise<TelegramPermission> {
    const set: Record<string, unknown> = {};
    if (request.displayName !== undefined)
      set['displayName'] = checkName(request.displayName);
    for (const flag of ['canRead', 'canReply', 'trusted'] as const)
      if (request[flag] !== undefined) set[flag] = request[flag];
    set['updatedAt'] = this.clock.now();
    const record = await this.permissions
      .findOneAndUpdate(
        { _id: this.objectId(id) },
        { $set: set },
        { new: true },
      )
      .lean<TelegramPermissionRecord>()
      .exec();
    this.dropSnapshot();
    if (!record) throw new NotFoundException(TELEGRAM_PERMISSION_NOT_FOUND);
    return this.changed(toView(record), 'updated', by);
  }

  async remove(id: string, by: TelegramPermissionChangedBy): Promise<void> {
    const result = await this.permissions
      .deleteOne({ _id: this.objectId(id) })
      .exec();
    this.dropSnapshot();
    if (result.deletedCount === 0)
      throw new NotFoundException(TELEGRAM_PERMISSION_NOT_FOUND);
    this.events.emit('telegram.permissions.changed', {
      id,
      change: 'deleted',
      by,
      at: this.clock.now().toISOString(),
    });
  }

  async setConsoleChatId(chatId: string, consoleChatId: string): Promise<void> {
    await this.permissions
      .updateOne({ chatId }, { $set: { consoleChatId } })
      .exec();
    this.dropSnapshot();
  }

  async pauseAutoReply(chatId: string, until: Date): Promise<void> {
    const record = await this.permissions
      .findOneAndUpdate(
        { chatId },
        { $set: { autoReplyPausedUntil: until, updatedAt: this.clock.now() } },
        { new: true },
      )
      .lean<TelegramPermissionRecord>()
      .exec();
    this.dropSnapshot();
    if (record) this.changed(toView(record), 'updated', 'auto-reply');
  }

  private objectId(id: string): Types.ObjectId {
    if (!Types.ObjectId.isValid(id) || !/^[0-9a-f]{24}$/i.test(id))
      throw new NotFoundException(TELEGRAM_PERMISSION_NOT_FOUND);
    return new Types.ObjectId(id);
  }

  private changed(
    permission: TelegramPermission,
    change: 'created' | 'updated',
    by: TelegramPermissionChangedBy,
  ): TelegramPermission {
    this.events.emit('telegram.permissions.changed', {
      id: permission.id,
      change,
      by,
      at: this.clock.now().toISOString(),
    });
    return permission;
  }

  private dropSnapshot(): void {
    this.generation++;
    this.snapshot = null;
  }

  private byChatId(): Promise<Map<string, TelegramPermission>> {
    if (!this.snapshot) {
      const generation = this.generation;
      const loading = this.permissions
        .find({})
        .lean<TelegramPermissionRecord[]>()
        .exec()
        .then(
          (records) =>
            new Map(records.map((r) => [r.chatId, toView(r)] as const)),
        );
      this.snapshot = loading;
      loading.then(
        () => {
          if (this.generation !== generation && this.snapshot === loading)
            this.snapshot = null;
        },
        () => {
          if (this.snapshot === loading) this.snapshot = null;
        },
      );
    }
    return this.snapshot;
  }
}

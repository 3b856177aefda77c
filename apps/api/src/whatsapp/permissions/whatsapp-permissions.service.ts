import {
  BadRequestException,
  ConflictException,
  Injectable,
  NotFoundException,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import type {
  CreateWhatsAppPermissionRequest,
  UpdateWhatsAppPermissionRequest,
  WhatsAppPermission,
} from '@metatronos/shared-types';
import { Clock } from '../../clock/clock';
import { isDuplicateKey } from '../../database/duplicate-key';
import { StartUpWork } from '../../database/start-up-work';
import { AppEventBus } from '../../events/app-event-bus';
import { WhatsAppPermissionRecord } from './schemas/whatsapp-permission.schema';
import {
  checkDisplayName,
  cleanDisplayName,
  PERMISSION_EXISTS,
  PERMISSION_FIELDS_REQUIRED,
  PERMISSION_NOT_FOUND,
  requirePhoneNumber,
} from './whatsapp-permission-input';

export type PermissionChangedBy = 'owner' | 'ai' | 'auto-reply';

type Flags = Partial<
  Pick<WhatsAppPermission, 'canRead' | 'canReply' | 'trusted'>
>;

/**
 * `whatsapp_permissions`: the owner's REST routes and the AI's tools both go
 * through here. Lookups by phone (each inbound message makes two) read an
 * in-memory copy of the collection: only this service writes it (db_query may
 * only read it), and every write here drops the copy.
 */
@Injectable()
export class WhatsAppPermissionsService implements OnApplicationBootstrap {
  private indexes: Promise<void> | null = null;
  private snapshot: Promise<Map<string, WhatsAppPermission>> | null = null;
  /** Bumped by every write, so a read that raced a write is not kept. */
  private generation = 0;

  constructor(
    @InjectModel(WhatsAppPermissionRecord.name)
    private readonly permissions: Model<WhatsAppPermissionRecord>,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
    private readonly startUp: StartUpWork,
  ) {}

  onApplicationBootstrap(): void {
    // Not held for: the insert that needs the unique index awaits it; reads need no index to be right.
    this.startUp.run('create the WhatsApp permission indexes', () =>
      this.ensureIndexes(),
    );
  }

  /** Every record, sorted by displayName (case-insensitive), then phone number. */
  async list(): Promise<WhatsAppPermission[]> {
    const records = await this.permissions
      .find({})
      .lean<WhatsAppPermissionRecord[]>()
      .exec();
    return records.map(toView).sort(byDisplayName);
  }

  async findByPhone(phoneNumber: string): Promise<WhatsAppPermission | null> {
    return (await this.byPhone()).get(phoneNumber) ?? null;
  }

  /** The phone numbers the AI may read (canRead). */
  async readablePhones(): Promise<string[]> {
    return [...(await this.byPhone()).values()]
      .filter((p) => p.canRead && p.phoneNumber)
      .map((p) => p.phoneNumber);
  }

  /** The auto-reply service records the contact's dedicated chat (no event: nothing the owner changed). */
  async setChatId(phoneNumber: string, chatId: string): Promise<void> {
    await this.write(() =>
      this.permissions.updateOne({ phoneNumber }, { $set: { chatId } }).exec(),
    );
  }

  /** The bot-loop guard: no auto-replies to this contact until `until` (kept across restarts; the owner can lift it). */
  async pauseAutoReply(phoneNumber: string, until: Date): Promise<void> {
    const updated = await this.write(() =>
      this.permissions
        .findOneAndUpdate(
          { phoneNumber },
          {
            $set: { autoReplyPausedUntil: until, updatedAt: this.clock.now() },
          },
          { new: true },
        )
        .lean<WhatsAppPermissionRecord>()
        .exec(),
    );
    if (updated) this.changed(updated, 'updated', 'auto-reply');
  }

  /** The owner lifts a bot-loop pause. */
  async resumeAutoReply(id: string): Promise<WhatsAppPermission> {
    return this.apply(
      { _id: objectId(id) },
      { autoReplyPausedUntil: null },
      'owner',
    );
  }

  /** Every record by phone number, read once and kept until the next write. */
  private byPhone(): Promise<Map<string, WhatsAppPermission>> {
    if (this.snapshot) return this.snapshot;
    const generation = this.generation;
    const loading = this.permissions
      .find({})
      .lean<WhatsAppPermissionRecord[]>()
      .exec()
      .then(
        (records) =>
          new Map(
            records.map((record) => [
              String(record.phoneNumber ?? ''),
              toView(record),
            ]),
          ),
      );
    this.snapshot = loading;
    // A failed read is not kept; neither is one that a write overtook.
    loading.then(
      () => {
        if (this.generation !== generation && this.snapshot === loading)
          this.snapshot = null;
      },
      () => {
        if (this.snapshot === loading) this.snapshot = null;
      },
    );
    return loading;
  }

  /** Runs a write with the in-memory copy dropped before and after it, so no read overlapping the write is kept. */
  private async write<T>(operation: () => Promise<T>): Promise<T> {
    this.forget();
    try {
      return await operation();
    } finally {
      this.forget();
    }
  }

  private forget(): void {
    this.generation++;
    this.snapshot = null;
  }

  async create(
    request: CreateWhatsAppPermissionRequest,
    by: PermissionChangedBy,
  ): Promise<WhatsAppPermission> {
    if (
      typeof request.phoneNumber !== 'string' ||
      typeof request.displayName !== 'string' ||
      !request.phoneNumber.trim() ||
      !cleanDisplayName(request.displayName)
    ) {
      throw new BadRequestException(PERMISSION_FIELDS_REQUIRED);
    }
    const phoneNumber = requirePhoneNumber(request.phoneNumber);
    const displayName = checkDisplayName(request.displayName);
    await this.ensureIndexes();
    if (await this.permissions.exists({ phoneNumber }).exec())
      throw new ConflictException(PERMISSION_EXISTS);
    const now = this.clock.now();
    const record: WhatsAppPermissionRecord = {
      _id: new Types.ObjectId(),
      phoneNumber,
      displayName,
      contactId: null,
      canRead: request.canRead ?? false,
      canReply: request.canReply ?? false,
      trusted: request.trusted ?? false,
      chatId: null,
      autoReplyPausedUntil: null,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.write(() => this.permissions.collection.insertOne(record));
    } catch (error) {
      if (isDuplicateKey(error)) throw new ConflictException(PERMISSION_EXISTS);
      throw error;
    }
    this.changed(record, 'created', by);
    return toView(record);
  }

  async update(
    id: string,
    request: UpdateWhatsAppPermissionRequest,
    by: PermissionChangedBy,
  ): Promise<WhatsAppPermission> {
    const _id = objectId(id);
    const set: Partial<WhatsAppPermissionRecord> = { ...pickFlags(request) };
    if (request.displayName !== undefined)
      set.displayName = checkDisplayName(request.displayName);
    return this.apply({ _id }, set, by);
  }

  async remove(id: string, by: PermissionChangedBy): Promise<void> {
    const _id = objectId(id);
    const record = await this.write(() =>
      this.permissions
        .findOneAndDelete({ _id })
        .lean<WhatsAppPermissionRecord>()
        .exec(),
    );
    if (!record) throw new NotFoundException(PERMISSION_NOT_FOUND);
    this.changed(record, 'deleted', by);
  }

  /** The tool's grant: creates the record, or overwrites name and flags of an existing one. */
  async grant(
    phoneNumber: string,
    displayName: string,
    flags: Flags,
    by: PermissionChangedBy,
  ): Promise<WhatsAppPermission> {
    const existing = await this.findByPhone(phoneNumber);
    const canRead = flags.canRead ?? true;
    const canReply = flags.canReply ?? false;
    if (!existing) {
      try {
        return await this.create(
          {
            phoneNumber,
            displayName,
            canRead,
            canReply,
            trusted: flags.trusted,
          },
          by,
        );
      } catch (error) {
        // Someone made it meanwhile: fall through to the update.
        if (!(error instanceof ConflictException)) throw error;
      }
    }
    return this.updateByPhone(
      phoneNumber,
      {
        displayName,
        canRead,
        canReply,
        ...(flags.trusted === undefined ? {} : { trusted: flags.trusted }),
      },
      by,
    );
  }

  async updateByPhone(
    phoneNumber: string,
    request: UpdateWhatsAppPermissionRequest,
    by: PermissionChangedBy,
  ): Promise<WhatsAppPermission> {
    const set: Partial<WhatsAppPermissionRecord> = { ...pickFlags(request) };
    if (request.displayName !== undefined)
      set.displayName = checkDisplayName(request.displayName);
    return this.apply({ phoneNumber }, set, by);
  }

  async removeByPhone(
    phoneNumber: string,
    by: PermissionChangedBy,
  ): Promise<void> {
    const record = await this.write(() =>
      this.permissions
        .findOneAndDelete({ phoneNumber })
        .lean<WhatsAppPermissionRecord>()
        .exec(),
    );
    if (!record) throw new NotFoundException(PERMISSION_NOT_FOUND);
    this.changed(record, 'deleted', by);
  }

  private async apply(
    filter: { _id: Types.ObjectId } | { phoneNumber: string },
    set: Partial<WhatsAppPermissionRecord>,
    by: PermissionChangedBy,
  ): Promise<WhatsAppPermission> {
    const updated = await this.write(() =>
      this.permissions
        .findOneAndUpdate(
          filter,
          { $set: { ...set, updatedAt: this.clock.now() } },
          { new: true },
        )
        .lean<WhatsAppPermissionRecord>()
        .exec(),
    );
    if (!updated) throw new NotFoundException(PERMISSION_NOT_FOUND);
    this.changed(updated, 'updated', by);
    return toView(updated);
  }

  /** autoIndex is off (see DatabaseModule): the unique phone index is made before the first write. */
  private ensureIndexes(): Promise<void> {
    this.indexes ??= this.permissions
      .createIndexes()
      .then(() => undefined)
      .catch(() => {
        this.indexes = null;
      });
    return this.indexes;
  }

  private changed(
    record: WhatsAppPermissionRecord,
    change: 'created' | 'updated' | 'deleted',
    by: PermissionChangedBy,
  ): void {
    this.events.emit('whatsapp.permissions.changed', {
      id: record._id.toHexString(),
      change,
      by,
      at: this.clock.now().toISOString(),
    });
  }
}

function pickFlags(request: Flags): Flags {
  const flags: Flags = {};
  for (const key of ['canRead', 'canReply', 'trusted'] as const) {
    if (request[key] !== undefined) flags[key] = request[key];
  }
  return flags;
}

function objectId(id: string): Types.ObjectId {
  if (!/^[0-9a-f]{24}$/i.test(id))
    throw new NotFoundException(PERMISSION_NOT_FOUND);
  return new Types.ObjectId(id);
}

function byDisplayName(a: WhatsAppPermission, b: WhatsAppPermission): number {
  const x = a.displayName.toLowerCase();
  const y = b.displayName.toLowerCase();
  return x < y
    ? -1
    : x > y
      ? 1
      : a.phoneNumber < b.phoneNumber
        ? -1
        : a.phoneNumber > b.phoneNumber
          ? 1
          : 0;
}

function toView(raw: WhatsAppPermissionRecord): WhatsAppPermission {
  return {
    id: raw._id.toHexString(),
    phoneNumber: String(raw.phoneNumber ?? ''),
    displayName: typeof raw.displayName === 'string' ? raw.displayName : '',
    contactId: idOrNull(raw.contactId),
    canRead: raw.canRead === true,
    canReply: raw.canReply === true,
    trusted: raw.trusted === true,
    chatId: idOrNull(raw.chatId),
    autoReplyPausedUntil:
      raw.autoReplyPausedUntil instanceof Date
        ? raw.autoReplyPausedUntil.toISOString()
        : null,
    createdAt: toIso(raw.createdAt),
    updatedAt: toIso(raw.updatedAt ?? raw.createdAt),
  };
}

function idOrNull(value: unknown): string | null {
  if (value instanceof Types.ObjectId) return value.toHexString();
  return typeof value === 'string' && value ? value : null;
}

function toIso(value: unknown): string {
  return value instanceof Date
    ? value.toISOString()
    : new Date(0).toISOString();
}

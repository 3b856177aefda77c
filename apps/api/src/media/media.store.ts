import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { createHash, randomBytes } from 'node:crypto';
import {
  mkdir,
  rename,
  rm,
  stat,
  writeFile,
  type FileHandle,
} from 'node:fs/promises';
import { basename, join } from 'node:path';
import { FileAccessError, openFileBeneath } from '../files/contained-file';
import { Types, type Model } from 'mongoose';
import type { MediaInfo, MediaKind } from '@metatronos/shared-types';
import {
  ChatDeletionCleanup,
  OneAtATime,
} from '../chats/chat-deletion-cleanup';
import { Clock } from '../clock/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { EXTENSION_BY_MIME, readImageInfo } from './image-info';
import { MediaRecord } from './schemas/media.schema';
import { removeStrayTempFiles } from '../attachments/stray-temp-files';

export interface NewMedia {
  chatId: string | null;
  messageId: string | null;
  kind: MediaKind;
  prompt: string;
  shortDescription: string;
  model: string;
  sourceMediaId?: string;
  sourceAttachmentId?: string;
}

const OBJECT_ID = /^[0-9a-f]{24}$/i;
const SHA256 = /^[0-9a-f]{64}$/;

/** A stored image found by id. */
export type StoredMedia = MediaRecord;

/**
 * Images on disk under `<DATA_DIR>/media/`, one file per distinct content
 * (`<sha256>.<ext>`), and their records in `media`. Paths are only ever built
 * from a stored hash checked to be 64 hex digits, never from request input.
 *
 * Deleting a chat deletes its records, then each file no other record uses.
 * "Write the file + create its record" and "see that no record uses a file +
 * delete it" run one at a time (`exclusive`), so a save of the same bytes never
 * ends with a record whose file was just deleted. One process owns DATA_DIR
 * (DataDirLock), so an in-process queue is enough; no database transaction needed.
 */
@Injectable()
export class MediaStore
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(MediaStore.name);
  readonly dir: string;
  private readonly exclusive = new OneAtATime();
  private readonly chatCleanup: ChatDeletionCleanup;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectModel(MediaRecord.name) private readonly model: Model<MediaRecord>,
    private readonly clock: Clock,
    emitter: EventEmitter2,
  ) {
    this.dir = join(config.dataDir, 'media');
    this.chatCleanup = new ChatDeletionCleanup(
      emitter,
      this.logger,
      'images',
      (chatId) => this.deleteChat(chatId),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    this.chatCleanup.start();
    // Images whose write a crash cut off (before their rename).
    await removeStrayTempFiles(this.dir).catch((error: Error) =>
      this.logger.warn(`Could not remove unfinished images: ${error.message}`),
    );
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.chatCleanup.stop();
  }

  /** Resolves once the cleanups started by deleted chats have finished (tests, shutdown). */
  settled(): Promise<void> {
    return this.chatCleanup.settled();
  }

  /** Deletes every image record of the chat, then the files no other record (of any chat) still uses. Returns how many records went. */
  async deleteChat(chatId: string): Promise<number> {
    const id = toObjectId(chatId);
    if (!id) return 0;
    const records = await this.model
      .find({ chatId: id }, { _id: 1, sha256: 1, mime: 1 })
      .lean<StoredMedia[]>()
      .exec();
    if (!records.length) return 0;
    await this.model
      .deleteMany({ _id: { $in: records.map((record) => record._id) } })
      .exec();
    await this.exclusive.run(() => this.deleteUnusedFiles(records));
    return records.length;
  }

  /** Checks the bytes are a PNG/JPEG/WebP image, writes them (once per content) and records them. */
  async save(bytes: Buffer, meta: NewMedia): Promise<StoredMedia> {
    const info = readImageInfo(bytes);
    if (!info)
      throw new Error(
        'The image model returned data that is not a PNG, JPEG or WebP image.',
      );
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    return this.exclusive.run(async () => {
      await this.writeOnce(
        join(this.dir, `${sha256}.${EXTENSION_BY_MIME[info.mime]}`),
        bytes,
      );
      try {
        const created = await this.model.create({
          chatId: toObjectId(meta.chatId),
          messageId: toObjectId(meta.messageId),
          kind: meta.kind,
          prompt: meta.prompt,
          shortDescription: meta.shortDescription,
          model: meta.model,
          mime: info.mime,
          size: bytes.length,
          width: info.width,
          height: info.height,
          sha256,
          ...(meta.sourceMediaId
            ? { sourceMediaId: new Types.ObjectId(meta.sourceMediaId) }
            : {}),
          ...(meta.sourceAttachmentId
            ? {
                sourceAttachmentId: new Types.ObjectId(meta.sourceAttachmentId),
              }
            : {}),
          createdAt: this.clock.now(),
        });
        return created.toObject();
      } catch (error) {
        await this.deleteUnusedFiles([{ sha256, mime: info.mime }]).catch(
          () => undefined,
        );
        throw error;
      }
    });
  }

  /** The record, or null for an unknown or malformed id. */
  async find(id: string): Promise<StoredMedia | null> {
    if (typeof id !== 'string' || !OBJECT_ID.test(id)) return null;
    return this.model.findById(id).lean().exec();
  }

  /** Where the record's bytes are, or null when the record's hash or type is not one the store wrote. */
  filePath(record: Pick<StoredMedia, 'sha256' | 'mime'>): string | null {
    const ext = EXTENSION_BY_MIME[record.mime];
    if (
      typeof record.sha256 !== 'string' ||
      !SHA256.test(record.sha256) ||
      !ext
    )
      return null;
    return join(this.dir, `${record.sha256}.${ext}`);
  }

  /** The record's file opened once without following a link (see contained-file.ts); null when it is gone. */
  async open(record: StoredMedia): Promise<FileHandle | null> {
    const path = this.filePath(record);
    if (!path) return null;
    try {
      return await openFileBeneath(this.dir, 'media', basename(path), 'read');
    } catch (error) {
      this.logger.warn(
        `Media ${String(record._id)}: file missing (${error instanceof FileAccessError ? error.message : ((error as NodeJS.ErrnoException).code ?? 'error')})`,
      );
      return null;
    }
  }

  /** The bytes of a stored image, or null when its file is gone. */
  async readBytes(record: StoredMedia): Promise<Buffer | null> {
    const handle = await this.open(record);
    if (!handle) return null;
    try {
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }

  /** Deletes the files of these hashes that no record uses any more. Call inside `exclusive`. */
  private async deleteUnusedFiles(
    records: ReadonlyArray<Pick<StoredMedia, 'sha256' | 'mime'>>,
  ): Promise<void> {
    const paths = new Map<string, string>();
    for (const record of records) {
      const path = this.filePath(record);
      if (path) paths.set(path, record.sha256);
    }
    for (const [path, sha256] of paths) {
      if (await this.model.exists({ sha256 }).exec()) continue;
      await rm(path, { force: true });
    }
  }

  /** Same content, same name: an existing file is kept; a new one is written to a temp file then renamed. */
  private async writeOnce(path: string, bytes: Buffer): Promise<void> {
    if ((await stat(path).catch(() => null))?.size === bytes.length) return;
    await mkdir(this.dir, { recursive: true });
    const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeFile(temp, bytes, { flag: 'wx' });
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }
}

function toObjectId(id: string | null): Types.ObjectId | null {
  return id && OBJECT_ID.test(id) ? new Types.ObjectId(id) : null;
}

export function mediaUrl(id: string): string {
  return `/api/media/${id}`;
}

export function toMediaInfo(record: StoredMedia): MediaInfo {
  const id = String(record._id);
  return {
    id,
    chatId: record.chatId ? String(record.chatId) : null,
    messageId: record.messageId ? String(record.messageId) : null,
    kind: record.kind,
    prompt: record.prompt ?? '',
    shortDescription: record.shortDescription ?? '',
    model: record.model,
    mime: record.mime,
    size: record.size,
    width: record.width,
    height: record.height,
    sha256: record.sha256,
    sourceMediaId: record.sourceMediaId ? String(record.sourceMediaId) : null,
    sourceAttachmentId: record.sourceAttachmentId
      ? String(record.sourceAttachmentId)
      : null,
    url: mediaUrl(id),
    createdAt: new Date(record.createdAt).toISOString(),
  };
}

import {
  BadRequestException,
  Inject,
  Injectable,
  Logger,
  NotFoundException,
  PayloadTooLargeException,
  UnsupportedMediaTypeException,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { createHash, randomUUID } from 'node:crypto';
import type { ReadStream } from 'node:fs';
import { mkdir, rename, rm, unlink, type FileHandle } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Types, type Model } from 'mongoose';
import {
  FileAccessError,
  openFileBeneath,
  writeChunks,
} from '../files/contained-file';
import type {
  MessageAttachment,
  UploadedAttachment,
} from '@metatronos/shared-types';
import {
  ChatDeletionCleanup,
  OneAtATime,
} from '../chats/chat-deletion-cleanup';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import type { LlmAttachment } from '../llm/llm-adapter';
import { Clock } from '../clock/clock';
import { StartUpWork } from '../database/start-up-work';
import { AttachmentRecord } from './attachment.schema';
import {
  SNIFF_BYTES,
  TextCheck,
  decideType,
  sanitizeFileName,
  type AttachmentType,
} from './attachment-type';
import { busboy, type BusboyParser } from './busboy';
import { removeStrayTempFiles } from './stray-temp-files';

/** A text attachment gives the model at most this many bytes (the rest is cut with a note). */
export const TEXT_ATTACHMENT_MODEL_BYTES = 100 * 1024;
/** Image types the image models take as an edit source (not GIF). */
const EDITABLE_IMAGE_MIMES = new Set(['image/png', 'image/jpeg', 'image/webp']);
/** An upload never sent with a message is removed at the next start once it is this old. */
export const ABANDONED_UPLOAD_MS = 24 * 60 * 60 * 1000;

const SHA256_NAME = /^[0-9a-f]{64}$/;
const FIELD = 'file';

interface StoredFile extends AttachmentType {
  name: string;
  size: number;
  sha256: string;
  /** Where the checked bytes wait until upload() moves them to their SHA-256 name. */
  temp: string;
}

export interface AttachmentDownload {
  record: AttachmentRecord;
  size: number;
  /** The bytes of the file opened at download(); closes it at the end. */
  stream(): ReadStream;
  /** Closes the opened file when it is not streamed (a 304). */
  close(): Promise<void>;
}

export function toMessageAttachment(
  record: AttachmentRecord,
): MessageAttachment {
  return {
    id: record._id.toHexString(),
    name: record.name,
    mime: record.mime,
    size: record.size,
    kind: record.kind,
  };
}

/**
 * Uploaded files: streamed to `<DATA_DIR>/attachments/` (hashed on the way, renamed to their SHA-256,
 * never held in memory whole), recorded in `attachments`, linked to the message they are sent with,
 * and read back for that one turn.
 *
 * Deleting a chat deletes its attachments, and each start deletes uploads never sent and older than
 * ABANDONED_UPLOAD_MS: the records first, then each file no other record uses. "Rename the file to
 * its hash + insert its record" and "see that no record uses a file + delete it" run one at a time
 * (`exclusive`), so an upload of the same bytes never ends with a record whose file was just deleted.
 * One process owns DATA_DIR (DataDirLock), so an in-process queue is enough; no transaction needed.
 *
 * A body that ends early (cut, aborted, never closed) is a 400 and leaves no temp file (`.part`);
 * the temp files a crash left are deleted at start, before the server takes requests.
 */
@Injectable()
export class AttachmentsService
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(AttachmentsService.name);
  readonly directory: string;
  private readonly exclusive = new OneAtATime();
  private readonly chatCleanup: ChatDeletionCleanup;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectModel(AttachmentRecord.name)
    private readonly records: Model<AttachmentRecord>,
    private readonly clock: Clock,
    emitter: EventEmitter2,
    private readonly startUp: StartUpWork,
  ) {
    this.directory = join(config.dataDir, 'attachments');
    this.chatCleanup = new ChatDeletionCleanup(
      emitter,
      this.logger,
      'attachments',
      (chatId) => this.deleteChat(chatId),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    // autoIndex is off (see DatabaseModule): the indexes are made here, once per boot. Neither
    // they nor the sweep of old abandoned uploads is needed to answer: the server listens meanwhile.
    this.startUp.run('create the attachment indexes', () =>
      this.records.createIndexes(),
    );
    this.startUp.run('delete abandoned uploads', () => this.deleteAbandoned());
    this.chatCleanup.start();
    await removeStrayTempFiles(this.directory).then(
      (names) =>
        names.length &&
        this.logger.log(
          `Removed ${names.length} unfinished upload(s) left by a crash`,
        ),
      (error: Error) =>
        this.logger.warn(
          `Could not remove unfinished uploads: ${error.message}`,
        ),
    );
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.chatCleanup.stop();
  }

  /** Resolves once the cleanups started by deleted chats have finished (tests, shutdown). */
  settled(): Promise<void> {
    return this.chatCleanup.settled();
  }

  /** Deletes every attachment of the chat, then the files no other record (of any chat) still uses. Returns how many records went. */
  async deleteChat(chatId: string): Promise<number> {
    if (typeof chatId !== 'string' || !/^[0-9a-f]{24}$/i.test(chatId)) return 0;
    return this.deleteRecords({ chatId: new Types.ObjectId(chatId) });
  }

  /** Deletes uploads never sent with a message and older than ABANDONED_UPLOAD_MS, and their unused files. */
  async deleteAbandoned(): Promise<number> {
    const before = new Date(this.clock.now().getTime() - ABANDONED_UPLOAD_MS);
    return this.deleteRecords({
      chatId: null,
      messageId: null,
      createdAt: { $lt: before },
    });
  }

  get maxBytes(): number {
    return this.config.media.attachmentMaxBytes;
  }

  /** Reads one multipart upload (field `file`) from the request; 400/413/415 leave no file behind. */
  async upload(req: IncomingMessage): Promise<UploadedAttachment> {
    return this.keep(await this.receive(req));
  }

  /**
   * Stores a file that arrived another way (a Telegram photo or document), with the same checks
   * and limits as an upload: unsent until a message claims it. 413/415 leave no file behind.
   */
  async importFile(
    source: Readable,
    name: string,
  ): Promise<UploadedAttachment> {
    return this.keep(await this.store(source, sanitizeFileName(name)));
  }

  /** Moves a checked file to its SHA-256 name and records it as an unsent upload. */
  private async keep(file: StoredFile): Promise<UploadedAttachment> {
    const record: AttachmentRecord = {
      _id: new Types.ObjectId(),
      name: file.name,
      mime: file.mime,
      size: file.size,
      sha256: file.sha256,
      kind: file.kind,
      chatId: null,
      messageId: null,
      createdAt: this.clock.now(),
    };
    await this.exclusive.run(async () => {
      try {
        // Same content, same name: an existing copy is replaced by identical bytes.
        await rename(file.temp, join(this.directory, file.sha256));
        await this.records.collection.insertOne(record);
      } catch (error) {
        await unlink(file.temp).catch(() => undefined);
        await this.deleteUnusedFiles([file.sha256]).catch(() => undefined);
        throw error;
      }
    });
    return {
      id: record._id.toHexString(),
      name: record.name,
      mime: record.mime,
      size: record.size,
    };
  }

  /** The stored file of an attachment; 404 for an unknown id or a file gone from disk. */
  async download(id: string): Promise<AttachmentDownload> {
    const record = await this.find(id);
    const handle = await this.openStored(record);
    if (!record || !handle) throw new NotFoundException('No such attachment.');
    const info = await handle.stat();
    return {
      record,
      size: info.size,
      stream: () => handle.createReadStream({ start: 0 }),
      close: () => handle.close(),
    };
  }

  /**
   * Links unsent attachments to a user message, atomically: unknown ids and attachments already
   * sent with another message are refused (400) and nothing is changed. Returns them in the given order.
   */
  async claim(
    ids: readonly string[],
    chatId: Types.ObjectId,
    messageId: Types.ObjectId,
  ): Promise<MessageAttachment[]> {
    if (ids.length === 0) return [];
    const objectIds = ids.map((id) => new Types.ObjectId(id));
    const found = await this.records
      .find({ _id: { $in: objectIds } })
      .lean<AttachmentRecord[]>()
      .exec();
    const byId = new Map(
      found.map((record) => [record._id.toHexString(), record]),
    );
    const missing = ids.filter((id) => !byId.has(id));
    if (missing.length)
      throw new BadRequestException(
        `Unknown attachment ${missing.map((id) => `"${id}"`).join(', ')}: upload the file first.`,
      );
    const used = ids
      .map((id) => byId.get(id) as AttachmentRecord)
      .filter((record) => record.messageId !== null);
    if (used.length)
      throw new BadRequestException(
        `Already sent with another message: ${used.map((r) => `"${r.name}" (${r._id.toHexString()})`).join(', ')}. Upload the file again to send it once more.`,
      );
    const result = await this.records
      .updateMany(
        { _id: { $in: objectIds }, messageId: null },
        { $set: { chatId, messageId } },
      )
      .exec();
    if (result.modifiedCount !== ids.length) {
      await this.release(messageId);
      throw new BadRequestException(
        'An attachment was just sent with another message. Upload the file again to send it once more.',
      );
    }
    return ids.map((id) =>
      toMessageAttachment(byId.get(id) as AttachmentRecord),
    );
  }

  /** Undoes claim() when the message could not be stored. */
  async release(messageId: Types.ObjectId): Promise<void> {
    await this.records
      .updateMany({ messageId }, { $set: { chatId: null, messageId: null } })
      .exec()
      .catch((error: Error) =>
        this.logger.warn(`Could not release attachments: ${error.message}`),
      );
  }

  /** The attachments of the new user message as the model gets them (bytes for images and PDF, text for text files). */
  async forTurn(
    attachments: readonly MessageAttachment[],
  ): Promise<LlmAttachment[]> {
    return Promise.all(
      attachments.map((attachment) => this.readForTurn(attachment)),
    );
  }

  private async readForTurn(
    attachment: MessageAttachment,
  ): Promise<LlmAttachment> {
    const { id, name, mime, size } = attachment;
    try {
      const record = await this.find(id);
      const handle = await this.openStored(record);
      if (!handle) return { kind: 'unavailable', id, name, mime, size };
      try {
        if (attachment.kind !== 'text')
          return {
            kind: attachment.kind,
            id,
            name,
            mime,
            size,
            data: await handle.readFile(),
          };
        const buffer = Buffer.alloc(
          Math.min(size, TEXT_ATTACHMENT_MODEL_BYTES),
        );
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
        // `stream: true` holds back a character cut in half at the cap.
        const text = new TextDecoder('utf-8').decode(
          buffer.subarray(0, bytesRead),
          { stream: true },
        );
        return {
          kind: 'text',
          id,
          name,
          mime,
          size,
          text: text.replace(/^\uFEFF/, ''),
          truncated: size > bytesRead,
        };
      } finally {
        await handle.close();
      }
    } catch (error) {
      this.logger.warn(
        `Could not read attachment ${id}: ${(error as Error).message}`,
      );
      return { kind: 'unavailable', id, name, mime, size };
    }
  }

  /**
   * An attached image as edit_image's source: its bytes and type, or null when the id is not an
   * image attachment (or its file is gone). `unsupported` names a type the image models do not take.
   */
  async imageSource(
    id: string,
  ): Promise<
    { id: string; bytes: Buffer; mime: string } | { unsupported: string } | null
  > {
    const record = await this.find(id);
    if (!record || record.kind !== 'image') return null;
    if (!EDITABLE_IMAGE_MIMES.has(record.mime))
      return { unsupported: record.mime };
    const handle = await this.openStored(record);
    const bytes = handle
      ? await handle
          .readFile()
          .catch(() => null)
          .finally(() => handle.close())
      : null;
    return bytes
      ? { id: record._id.toHexString(), bytes, mime: record.mime }
      : null;
  }

  private async find(id: string): Promise<AttachmentRecord | null> {
    if (!Types.ObjectId.isValid(id) || !/^[0-9a-f]{24}$/i.test(id)) return null;
    return this.records.findById(id).lean<AttachmentRecord>().exec();
  }

  /** The stored file of a record, opened once without following a link (see contained-file.ts); null when it is gone. */
  private async openStored(
    record: AttachmentRecord | null,
  ): Promise<FileHandle | null> {
    if (!record || !SHA256_NAME.test(record.sha256)) return null;
    try {
      return await openFileBeneath(
        this.directory,
        'attachments',
        record.sha256,
        'read',
      );
    } catch (error) {
      if (error instanceof FileAccessError) return null;
      throw error;
    }
  }

  /** Deletes the matching records (those still matching at the delete), then the files they leave unused. */
  private async deleteRecords(
    filter: Record<string, unknown>,
  ): Promise<number> {
    const found = await this.records
      .find(filter, { _id: 1, sha256: 1 })
      .lean<Array<Pick<AttachmentRecord, '_id' | 'sha256'>>>()
      .exec();
    if (!found.length) return 0;
    const { deletedCount } = await this.records
      .deleteMany({
        ...filter,
        _id: { $in: found.map((record) => record._id) },
      })
      .exec();
    await this.exclusive.run(() =>
      this.deleteUnusedFiles(found.map((record) => record.sha256)),
    );
    return deletedCount;
  }

  /** Deletes the files of these hashes that no record uses any more. Call inside `exclusive`. */
  private async deleteUnusedFiles(hashes: readonly string[]): Promise<void> {
    for (const sha256 of new Set(hashes)) {
      if (
        !SHA256_NAME.test(sha256) ||
        (await this.records.exists({ sha256 }).exec())
      )
        continue;
      await rm(join(this.directory, sha256), { force: true });
    }
  }

  private receive(req: IncomingMessage): Promise<StoredFile> {
    return new Promise<StoredFile>((resolve, reject) => {
      let parser: BusboyParser;
      try {
        parser = busboy({
          headers: req.headers,
          defParamCharset: 'utf8',
          limits: {
            files: 1,
            fields: 20,
            parts: 21,
            fileSize: this.maxBytes + 1,
          },
        });
      } catch {
        reject(
          new BadRequestException(
            `Send the file as multipart/form-data in a field named "${FIELD}".`,
          ),
        );
        return;
      }
      let settled = false;
      let stored: Promise<StoredFile> | null = null;
      const fail = (error: unknown) => {
        if (settled) return;
        settled = true;
        // A file already (or still being) checked is not kept.
        stored?.then((file) => unlink(file.temp)).catch(() => undefined);
        // Stop parsing: the file stream being written ends with an error, so its temp file is removed now.
        req.unpipe(parser);
        parser.destroy();
        // Read the rest of the body and drop it, so the client gets the answer instead of a reset connection.
        if (!req.destroyed) req.resume();
        reject(error);
      };
      parser.on('file', (field, stream, info) => {
        // busboy destroys a file stream with an error when the body ends inside it: never leave one without a listener.
        stream.on('error', () => undefined);
        if (field !== FIELD || stored || settled) {
          stream.resume();
          if (field !== FIELD)
            fail(
              new BadRequestException(
                `Send the file in a field named "${FIELD}".`,
              ),
            );
          return;
        }
        stored = this.store(stream, sanitizeFileName(info.filename));
        stored.catch(fail);
      });
      parser.on('filesLimit', () =>
        fail(new BadRequestException('Send one file per upload.')),
      );
      parser.on('error', (error) =>
        fail(
          new BadRequestException(
            `The upload could not be read: ${error.message}`,
          ),
        ),
      );
      parser.on('close', () => {
        if (settled) return;
        if (!stored)
          return fail(
            new BadRequestException(
              `No file: send it in a field named "${FIELD}".`,
            ),
          );
        stored.then((file) => {
          if (settled) return void unlink(file.temp).catch(() => undefined);
          settled = true;
          resolve(file);
        }, fail);
      });
      // The client went away before the whole body came (socket closed, or reset).
      const interrupted = () =>
        fail(new BadRequestException('The upload was interrupted.'));
      req.on('error', interrupted);
      req.on('close', () => {
        if (!req.complete) interrupted();
      });
      req.pipe(parser);
    });
  }

  /** Streams one file to a temporary name, hashing and checking it on the way; upload() renames it to its SHA-256. */
  private async store(source: Readable, name: string): Promise<StoredFile> {
    await mkdir(this.directory, { recursive: true });
    const tempName = `.upload-${randomUUID()}.part`;
    const temp = join(this.directory, tempName);
    const hash = createHash('sha256');
    const maxBytes = this.maxBytes;
    let size = 0;
    let head = Buffer.alloc(0);
    let type: AttachmentType | null = null;
    let text: TextCheck | null = null;
    const notText = () =>
      new UnsupportedMediaTypeException(`"${name}" is not a UTF-8 text file.`);
    const decide = () => {
      const decided = decideType(head, name);
      if (typeof decided === 'string')
        throw new UnsupportedMediaTypeException(decided);
      type = decided;
      if (decided.kind === 'text') {
        text = new TextCheck();
        if (!text.push(head)) throw notText();
      }
    };
    const check = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        try {
          size += chunk.length;
          if (size > maxBytes)
            throw new PayloadTooLargeException(
              `The file is larger than the ${Math.round(maxBytes / 1048576)} MB limit for attachments (ATTACHMENT_MAX_MB).`,
            );
          hash.update(chunk);
          if (!type) {
            head = Buffer.concat([head, chunk]);
            if (head.length >= SNIFF_BYTES) decide();
          } else if (text && !text.push(chunk)) {
            throw notText();
          }
          callback(null, chunk);
        } catch (error) {
          callback(error as Error);
        }
      },
      flush(callback) {
        try {
          if (size === 0) throw new BadRequestException('The file is empty.');
          if (!type) decide();
          if (text && !text.end()) throw notText();
          callback();
        } catch (error) {
          callback(error as Error);
        }
      },
    });
    let out: FileHandle | undefined;
    try {
      // The stream may have been ended by the parser (body cut short) while the directory was made.
      if (source.destroyed)
        throw new BadRequestException('The upload was interrupted.');
      // A new file (O_EXCL), opened without following a link and written only through its handle. It
      // exists before the first byte is read, so a refusal's unlink below always finds it.
      out = await openFileBeneath(
        this.directory,
        'attachments',
        tempName,
        'create',
      );
      const handle = out;
      await pipeline(source, check, async (chunks: AsyncIterable<Buffer>) => {
        await writeChunks(handle, chunks);
      });
      const sha256 = hash.digest('hex');
      const decided = type as AttachmentType | null;
      if (!decided)
        throw new UnsupportedMediaTypeException(
          'The file type could not be determined.',
        );
      return { ...decided, name, size, sha256, temp };
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      source.resume();
      throw error;
    } finally {
      await out?.close();
    }
  }
}

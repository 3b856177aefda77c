import {
  BadRequestException,
  ConflictException,
  Inject,
  Injectable,
  Logger,
  PayloadTooLargeException,
  type OnModuleInit,
} from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import { once } from 'node:events';
import { createWriteStream, Stats } from 'node:fs';
import {
  mkdir,
  mkdtemp,
  readFile,
  rename,
  rm,
  writeFile,
} from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { mongo, type Connection } from 'mongoose';
import { create as createTar } from 'tar';
import {
  BACKUP_FILE_DIRS,
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  type BackupCollectionEntry,
  type BackupFileDir,
  type BackupFileDirEntry,
  type BackupManifest,
  type RestoreResult,
} from '@metatronos/shared-types';
import { busboy } from '../attachments/busboy';
import { Clock } from '../clock/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { AppEventBus } from '../events/app-event-bus';
import { FileDirs } from '../files/file-dirs';
import { HIDDEN_COLLECTION_PREFIX } from '../mongo-sandbox/collection-access';
import { APP_VERSION } from '../version';
import {
  BackupArchiveError,
  readEjsonDocuments,
  unpackArchive,
} from './backup-archive';
import { copyTree, measureTree } from './backup-files';
import { BackupLimits } from './backup-limits';

/** A backup being downloaded: the archive stream and what to clean up once it ends. */
export interface BackupDownload {
  fileName: string;
  stream: NodeJS.ReadableStream;
  /** Deletes the staged copy; safe to call more than once. */
  release(): Promise<void>;
}

const UPLOAD_FIELD = 'file';
const INSERT_BATCH = 500;

/** Collections a backup carries: everything but credentials and sessions (`auth_*`) and server internals. */
function isBackedUp(name: string): boolean {
  return (
    !name.startsWith(HIDDEN_COLLECTION_PREFIX) && !name.startsWith('system.')
  );
}

/**
 * One archive of everything (`GET /api/backup`) and restoring it
 * (`POST /api/backup/restore`). A backup is a .tar.gz holding `manifest.json`,
 * `db/<collection>.ejson` (canonical Extended JSON, one document a line, so every
 * BSON type comes back as it was) and the `media`, `attachments` and `files`
 * folders of DATA_DIR. A restore unpacks and checks the whole archive in a work
 * folder before it changes anything.
 */
@Injectable()
export class BackupService implements OnModuleInit {
  private readonly logger = new Logger(BackupService.name);
  private readonly dataDir: string;
  private readonly workRoot: string;
  private busy = false;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectConnection() private readonly connection: Connection,
    private readonly limits: BackupLimits,
    private readonly fileDirs: FileDirs,
    private readonly events: AppEventBus,
    private readonly clock: Clock,
  ) {
    this.dataDir = resolve(config.dataDir);
    this.workRoot = join(this.dataDir, 'backup-work');
  }

  /** Work folders left by a backup or restore that a crash interrupted. */
  async onModuleInit(): Promise<void> {
    await rm(this.workRoot, { recursive: true, force: true });
  }

  private dirPath(dir: BackupFileDir): string {
    return dir === 'files' ? this.fileDirs.root : join(this.dataDir, dir);
  }

  private take(): void {
    if (this.busy)
      throw new ConflictException(
        'A backup or restore is already running; try again when it is done.',
      );
    this.busy = true;
  }

  private async workFolder(prefix: string): Promise<string> {
    await mkdir(this.workRoot, { recursive: true, mode: 0o700 });
    return mkdtemp(join(this.workRoot, prefix));
  }

  private get db(): mongo.Db {
    const db = this.connection.db;
    if (!db) throw new Error('the database is not connected');
    return db;
  }

  private async backedUpCollections(): Promise<string[]> {
    const list = await this.db
      .listCollections({}, { nameOnly: true })
      .toArray();
    return list
      .filter((c) => (c.type ?? 'collection') === 'collection')
      .map((c) => c.name)
      .filter(isBackedUp)
      .sort();
  }

  async create(): Promise<BackupDownload> {
    this.take();
    let staging: string | null = null;
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      if (staging) await rm(staging, { recursive: true, force: true });
      this.busy = false;
    };
    try {
      staging = await this.workFolder('backup-');
      await mkdir(join(staging, 'db'), { mode: 0o700 });
      const collections: BackupCollectionEntry[] = [];
      for (const name of await this.backedUpCollections())
        collections.push(await this.dumpCollection(name, staging));
      const dirs: BackupFileDirEntry[] = [];
      for (const dir of BACKUP_FILE_DIRS) {
        // Media and attachments are stored under their hash and never rewritten: a hard link is a safe copy.
        const copied = await copyTree(
          this.dirPath(dir),
          join(staging, dir),
          dir === 'files' ? 'copy' : 'link',
        );
        dirs.push({ name: dir, ...copied });
      }
      const createdAt = this.clock.now().toISOString();
      const manifest: BackupManifest = {
        format: BACKUP_FORMAT,
        formatVersion: BACKUP_FORMAT_VERSION,
        appVersion: APP_VERSION,
        createdAt,
        collections,
        dirs,
      };
      await writeFile(
        join(staging, 'manifest.json'),
        JSON.stringify(manifest, null, 2),
        { mode: 0o600 },
      );
      const stream = createTar(
        {
          gzip: true,
          cwd: staging,
          portable: true,
          // Only plain files and folders (copyTree made no others).
          filter: (_path, stat) =>
            !(stat instanceof Stats) || stat.isFile() || stat.isDirectory(),
        },
        [
          'manifest.json',
          'db',
          ...dirs.filter((d) => d.files > 0).map((d) => d.name),
        ],
      );
      const stamp = createdAt.slice(0, 16).replace(/[:T]/g, '-');
      return {
        fileName: `metatronos-backup-${stamp}.tar.gz`,
        stream: stream as unknown as NodeJS.ReadableStream,
        release,
      };
    } catch (error) {
      await release();
      throw error;
    }
  }

  private async dumpCollection(
    name: string,
    staging: string,
  ): Promise<BackupCollectionEntry> {
    const collection = this.db.collection(name);
    const out = createWriteStream(join(staging, 'db', `${name}.ejson`), {
      mode: 0o600,
    });
    let count = 0;
    // BSON wrappers as stored (Int32, Double, Long…), so canonical EJSON keeps each type.
    const cursor = collection.find(
      {},
      { promoteValues: false, promoteBuffers: false, bsonRegExp: true },
    );
    try {
      for await (const doc of cursor) {
        const line = `${mongo.BSON.EJSON.stringify(doc, { relaxed: false })}\n`;
        if (!out.write(line)) await once(out, 'drain');
        count += 1;
      }
    } finally {
      out.end();
      await finished(out);
    }
    const indexes = (await collection.listIndexes().toArray())
      .filter((index) => index['name'] !== '_id_')
      .map((index) => {
        const spec: Record<string, unknown> = { ...index };
        delete spec['v'];
        delete spec['ns'];
        return spec;
      });
    return { name, count, indexes };
  }

  async restore(
    req: IncomingMessage,
    replace: boolean,
  ): Promise<RestoreResult> {
    try {
      this.take();
    } catch (error) {
      req.resume();
      throw error;
    }
    let staging: string | null = null;
    try {
      if (!replace && (await this.hasConversations())) {
        req.resume();
        throw new ConflictException(
          'This MetatronOS already has chats. Restoring replaces all its data: send ?replace=true to do it anyway.',
        );
      }
      staging = await this.workFolder('restore-');
      const archive = join(staging, 'upload');
      await this.receive(req, archive);
      const unpacked = join(staging, 'unpacked');
      await mkdir(unpacked, { mode: 0o700 });
      const { files } = await unpackArchive(archive, unpacked, this.limits);
      await rm(archive);
      const manifest = await this.check(unpacked, files);

      // Everything was read and checked: from here on the instance changes.
      await this.restoreDatabase(unpacked, manifest, replace);
      const moved = await this.restoreFiles(unpacked, staging);
      const at = this.clock.now().toISOString();
      await this.events.emitAndWait('backup.restored', { at });
      await this.events.emitAndWait('settings.updated', { updatedAt: at });
      return {
        restored: true,
        appVersion: manifest.appVersion,
        createdAt: manifest.createdAt,
        collections: manifest.collections.map(({ name, count }) => ({
          name,
          count,
        })),
        ...moved,
      };
    } catch (error) {
      if (error instanceof BackupArchiveError) {
        const text = `This is not a usable MetatronOS backup: ${error.message}. Nothing was changed.`;
        throw error.tooLarge
          ? new PayloadTooLargeException(text)
          : new BadRequestException(text);
      }
      throw error;
    } finally {
      if (staging) await rm(staging, { recursive: true, force: true });
      this.busy = false;
    }
  }

  private async hasConversations(): Promise<boolean> {
    for (const name of ['chats', 'messages'])
      if ((await this.db.collection(name).estimatedDocumentCount()) > 0)
        return true;
    return false;
  }

  /** The upload, raw body or multipart field `file`, to a file (at most maxArchiveBytes). */
  private async receive(req: IncomingMessage, to: string): Promise<void> {
    const max = this.limits.maxArchiveBytes;
    const tooLarge = () =>
      new PayloadTooLargeException(
        `The archive is larger than the ${Math.round(max / 1024 ** 2)} MB a restore accepts. Nothing was changed.`,
      );
    const out = createWriteStream(to, { mode: 0o600 });
    let bytes = 0;
    const copy = async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) {
        bytes += chunk.length;
        if (bytes > max) throw tooLarge();
        if (!out.write(chunk)) await once(out, 'drain');
      }
    };
    try {
      const type = String(req.headers['content-type'] ?? '');
      if (/^multipart\/form-data/i.test(type)) {
        await new Promise<void>((resolveUpload, reject) => {
          const parser = busboy({
            headers: req.headers,
            limits: { files: 1, fields: 10, parts: 11 },
          });
          let seen = false;
          let copying: Promise<void> | null = null;
          parser.on('file', (field, stream) => {
            stream.on('error', () => undefined);
            if (field !== UPLOAD_FIELD || seen) return void stream.resume();
            seen = true;
            copying = copy(stream).catch((error) => {
              stream.resume();
              throw error;
            });
            copying.catch(reject);
          });
          parser.on('error', (error: Error) =>
            reject(
              new BadRequestException(
                `The upload could not be read: ${error.message}`,
              ),
            ),
          );
          parser.on('close', () => {
            if (!copying)
              return reject(
                new BadRequestException(
                  `No archive: send it in a field named "${UPLOAD_FIELD}".`,
                ),
              );
            copying.then(resolveUpload, reject);
          });
          req.on('aborted', () =>
            reject(new BadRequestException('The upload was interrupted.')),
          );
          req.pipe(parser);
        });
      } else {
        await copy(req);
      }
    } catch (error) {
      if (!req.complete) req.resume();
      out.destroy();
      throw error;
    }
    out.end();
    await finished(out);
    if (bytes === 0)
      throw new BadRequestException(
        `No archive: send the .tar.gz as the request body or in a multipart field named "${UPLOAD_FIELD}".`,
      );
  }

  /** Reads the manifest and every document; throws BackupArchiveError at the first thing that does not add up. */
  private async check(
    unpacked: string,
    files: Set<string>,
  ): Promise<BackupManifest> {
    if (!files.has('manifest.json'))
      throw new BackupArchiveError('it has no manifest.json');
    let manifest: BackupManifest;
    try {
      manifest = JSON.parse(
        await readFile(join(unpacked, 'manifest.json'), 'utf8'),
      ) as BackupManifest;
    } catch {
      throw new BackupArchiveError('its manifest.json is not JSON');
    }
    if (manifest?.format !== BACKUP_FORMAT)
      throw new BackupArchiveError(
        'its manifest.json does not describe a MetatronOS backup',
      );
    if (!Number.isInteger(manifest.formatVersion) || manifest.formatVersion < 1)
      throw new BackupArchiveError('its manifest.json has no format version');
    if (manifest.formatVersion > BACKUP_FORMAT_VERSION)
      throw new BackupArchiveError(
        `it was made by a newer MetatronOS (${String(manifest.appVersion)}, backup format ${manifest.formatVersion}); update this one first`,
      );
    if (!Array.isArray(manifest.collections) || !Array.isArray(manifest.dirs))
      throw new BackupArchiveError('its manifest.json lists no collections');

    const listed = new Set<string>();
    for (const entry of manifest.collections) {
      const name = entry?.name;
      if (
        typeof name !== 'string' ||
        !/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,119}$/.test(name) ||
        !isBackedUp(name) ||
        listed.has(name) ||
        !Number.isInteger(entry.count) ||
        !Array.isArray(entry.indexes)
      )
        throw new BackupArchiveError(
          `its manifest.json lists a collection it cannot hold (${JSON.stringify(name).slice(0, 80)})`,
        );
      listed.add(name);
      const file = `db/${name}.ejson`;
      if (!files.has(file)) throw new BackupArchiveError(`${file} is missing`);
      let count = 0;
      for await (const _doc of readEjsonDocuments(
        join(unpacked, file),
        this.limits.maxDocumentBytes,
      ))
        count += 1;
      if (count !== entry.count)
        throw new BackupArchiveError(
          `${file} holds ${count} documents instead of ${entry.count}`,
        );
    }
    for (const file of files)
      if (
        file.startsWith('db/') &&
        !listed.has(file.slice(3, -'.ejson'.length))
      )
        throw new BackupArchiveError(`${file} is not in its manifest.json`);

    for (const dir of BACKUP_FILE_DIRS) {
      const entry = manifest.dirs.find((d) => d?.name === dir);
      const found = await measureTree(join(unpacked, dir));
      const expected = { files: entry?.files ?? 0, bytes: entry?.bytes ?? 0 };
      if (found.files !== expected.files || found.bytes !== expected.bytes)
        throw new BackupArchiveError(
          `the ${dir} folder holds ${found.files} files (${found.bytes} bytes) instead of ${expected.files} (${expected.bytes} bytes)`,
        );
    }
    return manifest;
  }

  private async restoreDatabase(
    unpacked: string,
    manifest: BackupManifest,
    replace: boolean,
  ): Promise<void> {
    const db = this.db;
    const existing = new Set(await this.backedUpCollections());
    const incoming = new Map(manifest.collections.map((c) => [c.name, c]));
    for (const name of existing) {
      if (incoming.has(name)) await db.collection(name).deleteMany({});
      else if (replace) {
        if (name.startsWith('ai_')) await db.dropCollection(name);
        else await db.collection(name).deleteMany({});
      }
    }
    for (const entry of manifest.collections) {
      const collection = db.collection(entry.name);
      if (!existing.has(entry.name)) await db.createCollection(entry.name);
      for (const spec of entry.indexes) {
        const { key, ...options } = spec as unknown as {
          key: mongo.IndexSpecification;
        } & mongo.CreateIndexesOptions;
        await collection
          .createIndex(key, options)
          .catch((error: Error) =>
            this.logger.warn(
              `Index ${String(options.name)} of ${entry.name} not restored: ${error.message}`,
            ),
          );
      }
      let batch: mongo.BSON.Document[] = [];
      for await (const doc of readEjsonDocuments(
        join(unpacked, 'db', `${entry.name}.ejson`),
        this.limits.maxDocumentBytes,
      )) {
        batch.push(doc);
        if (batch.length >= INSERT_BATCH) {
          await collection.insertMany(batch, { ordered: true });
          batch = [];
        }
      }
      if (batch.length) await collection.insertMany(batch, { ordered: true });
    }
  }

  /** Swaps each data folder for the unpacked one (renames in DATA_DIR), putting the old ones back if a swap fails. */
  private async restoreFiles(
    unpacked: string,
    staging: string,
  ): Promise<{ files: number; bytes: number }> {
    const swapped: Array<{ target: string; old: string | null }> = [];
    let files = 0;
    let bytes = 0;
    try {
      for (const dir of BACKUP_FILE_DIRS) {
        const incoming = join(unpacked, dir);
        await mkdir(incoming, { recursive: true, mode: 0o700 });
        const measured = await measureTree(incoming);
        files += measured.files;
        bytes += measured.bytes;
        const target = this.dirPath(dir);
        const old = join(staging, `previous-${dir}`);
        const hadOld = await rename(target, old).then(
          () => true,
          (error: NodeJS.ErrnoException) => {
            if (error.code === 'ENOENT') return false;
            throw error;
          },
        );
        swapped.push({ target, old: hadOld ? old : null });
        await rename(incoming, target);
      }
    } catch (error) {
      for (const { target, old } of swapped.reverse()) {
        await rm(target, { recursive: true, force: true }).catch(
          () => undefined,
        );
        if (old) await rename(old, target).catch(() => undefined);
      }
      throw error;
    }
    this.fileDirs.ensure();
    return { files, bytes };
  }
}

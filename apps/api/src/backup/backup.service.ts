import {
  BadRequestException,
  ConflictException,
  Inject,
  Injectable,
  Logger,
  PayloadTooLargeException,
  InternalServerErrorException,
  type OnApplicationBootstrap,
  type OnModuleInit,
} from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import { once } from 'node:events';
import { createWriteStream, Stats } from 'node:fs';
import {
  access,
  mkdir,
  mkdtemp,
  readFile,
  rename,
  rm,
  writeFile,
} from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { finished } from 'node:stream/promises';
import { mongo, type Connection } from 'mongoose';
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
import { busboy, type BusboyParser } from '../attachments/busboy';
import { Clock } from '../clock/clock';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { AppEventBus } from '../events/app-event-bus';
import { FileDirs } from '../files/file-dirs';
import { APP_SETTINGS_ID } from '../settings/schemas/app-settings.schema';
import { SettingsService } from '../settings/settings.service';
import { HIDDEN_COLLECTION_PREFIX } from '../mongo-sandbox/collection-access';
import { APP_VERSION } from '../version';
import {
  BackupArchiveError,
  readEjsonDocuments,
  unpackArchive,
} from './backup-archive';
import { copyTree, measureTree } from './backup-files';
import { BackupLimits } from './backup-limits';
import {
  applyMcpServerSecrets,
  applySecrets,
  extractMcpServerSecrets,
  extractSecrets,
  MCP_SERVERS_COLLECTION_NAME,
  type McpServerSecrets,
  isSettingsDoc,
  sealSecrets,
  type SettingsSecrets,
  unsealSecrets,
  WrongPassphraseError,
} from './backup-secrets';
import { CollectionChecker, documentLabel } from './restore-document-check';
import {
  PREVIOUS_PREFIX,
  readJournal,
  removeJournal,
  type RestoreJournal,
  STAGING_PREFIX,
  syncDir,
  writeJournal,
} from './restore-journal';
import { restorePausePoint } from './restore-test-pause';

/** A backup being downloaded: the archive stream and what to clean up once it ends. */
export interface BackupDownload {
  fileName: string;
  stream: NodeJS.ReadableStream;
  /** Deletes the staged copy; safe to call more than once. */
  release(): Promise<void>;
}

const UPLOAD_FIELD = 'file';
const PASSPHRASE_FIELD = 'passphrase';
const INSERT_BATCH = 500;
/** In DATA_DIR: the journal of a restore being switched in. */
const RESTORE_JOURNAL = 'backup-restore.journal.json';
/** In DATA_DIR: archives of restores a crash interrupted, kept for the owner. */
const INTERRUPTED_DIR = 'backup-interrupted';
/** Problems listed in one refusal. */
const MAX_PROBLEMS = 5;

/**
 * This instance's own caches: the memory index's snapshot token names a file in this
 * DATA_DIR, which backups leave out (the index is read again after a restore); the memory's
 * embeddings are computed again from the restored notes and messages (a large, derived set).
 */
const INSTANCE_CACHES = new Set(['memory_index', 'memory_embeddings']);

/**
 * Credentials outside `auth_*`: MCP servers' OAuth tokens (`mcp_oauth`). A backup never holds them,
 * sealed or not; after a restore such a server asks the owner to sign in again.
 */
const CREDENTIALS = new Set(['mcp_oauth']);

/** Collections a backup carries: everything but credentials and sessions (`auth_*`), server internals and caches. */
function isBackedUp(name: string): boolean {
  return (
    !name.startsWith(HIDDEN_COLLECTION_PREFIX) &&
    !name.startsWith('system.') &&
    !INSTANCE_CACHES.has(name) &&
    !CREDENTIALS.has(name)
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
export class BackupService implements OnModuleInit, OnApplicationBootstrap {
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
    private readonly settings: SettingsService,
  ) {
    this.dataDir = resolve(config.dataDir);
    this.workRoot = join(this.dataDir, 'backup-work');
  }

  private recovered = false;

  /**
   * A restore a crash interrupted is finished or rolled back before anything reads
   * the data; a failure here is reported, never a reason not to start.
   */
  async onModuleInit(): Promise<void> {
    try {
      this.recovered = await this.recover();
      // Work folders of backups and restores that a crash interrupted.
      await rm(this.workRoot, { recursive: true, force: true });
    } catch (error) {
      this.logger.error(
        `Could not recover an interrupted restore (${error instanceof Error ? error.message : String(error)}); trying again at the next start`,
      );
    }
  }

  /** Listeners exist only now: drop what was read before the recovered restore was switched in. */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.recovered) return;
    const at = this.clock.now().toISOString();
    await this.events.emitAndWait('backup.restored', { at });
    await this.events.emitAndWait('settings.updated', { updatedAt: at });
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

  /** With a passphrase the settings' secrets go into the archive sealed with it; without one they are left out. */
  async create(passphrase?: string): Promise<BackupDownload> {
    this.take();
    let staging: string | null = null;
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      // Free at once: each backup stages in a folder of its own, so removing this one can trail.
      this.busy = false;
      if (staging) await rm(staging, { recursive: true, force: true });
    };
    try {
      staging = await this.workFolder('backup-');
      let secrets: SettingsSecrets | null = null;
      const mcpServers: McpServerSecrets[] = [];
      await mkdir(join(staging, 'db'), { mode: 0o700 });
      const collections: BackupCollectionEntry[] = [];
      for (const name of await this.backedUpCollections())
        collections.push(
          await this.dumpCollection(name, staging, (doc) => {
            if (name === MCP_SERVERS_COLLECTION_NAME) {
              const stripped = extractMcpServerSecrets(doc);
              mcpServers.push(stripped.secrets);
              return stripped.doc;
            }
            if (name !== 'settings' || !isSettingsDoc(doc)) return doc;
            const stripped = extractSecrets(doc);
            secrets = stripped.secrets;
            return stripped.doc;
          }),
        );
      const sealable: SettingsSecrets | null =
        secrets || mcpServers.length
          ? {
              ...(secrets ?? { fields: {}, endpoints: [], authProfiles: [] }),
              mcpServers,
            }
          : null;
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
        secrets:
          passphrase && sealable
            ? await sealSecrets(sealable, passphrase)
            : { included: false },
      };
      await writeFile(
        join(staging, 'manifest.json'),
        JSON.stringify(manifest, null, 2),
        { mode: 0o600 },
      );
      // tar loads with the first backup: ~1 MB of heap the server would hold from its start.
      const { create: createTar } = await import('tar');
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
    transform: (doc: mongo.BSON.Document) => mongo.BSON.Document,
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
        const line = `${mongo.BSON.EJSON.stringify(transform(doc), { relaxed: false })}\n`;
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

  /**
   * `passphrase` (query or header) opens the secrets of a backup made with one; a
   * multipart field `passphrase` does too.
   */
  async restore(
    req: IncomingMessage,
    replace: boolean,
    passphrase?: string,
  ): Promise<RestoreResult> {
    try {
      this.take();
    } catch (error) {
      req.resume();
      throw error;
    }
    let work: string | null = null;
    let journal: RestoreJournal | null = null;
    let committed = false;
    try {
      if (!replace && (await this.hasConversations())) {
        req.resume();
        throw new ConflictException(
          'This MetatronOS already has chats. Restoring replaces all its data: send ?replace=true to do it anyway.',
        );
      }
      // A committed restore whose switch failed earlier is finished before another one starts.
      if (await readJournal(this.journalFile)) await this.recover();
      work = await this.workFolder('restore-');
      const archive = join(work, 'upload.tar.gz');
      const fields = await this.receive(req, archive);
      const given = passphrase || fields.passphrase || undefined;
      const unpacked = join(work, 'unpacked');
      await mkdir(unpacked, { mode: 0o700 });
      const { files } = await unpackArchive(archive, unpacked, this.limits);
      const manifest = await this.check(unpacked, files);
      const secrets = await this.restoredSecrets(manifest, given);

      // Everything was read and checked. The new data is written beside the live data
      // (staging collections, unpacked folders); the journal makes the switch survive a crash.
      const existing = new Set(await this.backedUpCollections());
      const incoming = new Set(manifest.collections.map((c) => c.name));
      const replaced = replace
        ? [...existing].filter((n) => !incoming.has(n) && !n.startsWith('ai_'))
        : [];
      const dirs = [];
      for (const dir of BACKUP_FILE_DIRS) {
        const from = join(unpacked, dir);
        await mkdir(from, { recursive: true, mode: 0o700 });
        dirs.push({
          incoming: from,
          target: this.dirPath(dir),
          previous: join(work, `previous-${dir}`),
        });
      }
      const moved = { files: 0, bytes: 0 };
      for (const { incoming: from } of dirs) {
        const measured = await measureTree(from);
        moved.files += measured.files;
        moved.bytes += measured.bytes;
      }
      journal = {
        version: 1,
        phase: 'staging',
        work,
        archive,
        switch: [...manifest.collections.map((c) => c.name), ...replaced],
        drop: replace
          ? [...existing].filter((n) => !incoming.has(n) && n.startsWith('ai_'))
          : [],
        dirs,
        startedAt: this.clock.now().toISOString(),
      };
      await this.dropLeftovers();
      await writeJournal(this.journalFile, journal);
      await this.stage(unpacked, manifest, journal.switch, secrets.use);
      journal.phase = 'committed';
      await writeJournal(this.journalFile, journal);
      committed = true;
      await restorePausePoint('committed');
      await this.finish(journal);

      const at = this.clock.now().toISOString();
      await this.events.emitAndWait('backup.restored', {
        at,
        secrets: secrets.result,
      });
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
        secrets: secrets.result,
      };
    } catch (error) {
      if (journal && !committed)
        await this.rollBack(journal, null).catch((rollBackError: Error) =>
          this.logger.error(
            `A refused restore could not remove its staging data: ${rollBackError.message}; the next start does`,
          ),
        );
      if (error instanceof WrongPassphraseError)
        throw new BadRequestException(
          "Wrong passphrase: it does not open this backup's secrets. Nothing was changed.",
        );
      if (error instanceof BackupArchiveError) {
        const text = `This is not a usable MetatronOS backup: ${error.message}. Nothing was changed.`;
        throw error.tooLarge
          ? new PayloadTooLargeException(text)
          : new BadRequestException(text);
      }
      if (committed) {
        this.logger.error(
          `A restore was committed but could not finish switching (${error instanceof Error ? error.message : String(error)}); the next start finishes it`,
        );
        throw new InternalServerErrorException(
          'The restore is complete but could not be switched in yet; restart MetatronOS to finish it.',
        );
      }
      throw error;
    } finally {
      if (work && !committed)
        await rm(work, { recursive: true, force: true }).catch(() => undefined);
      this.busy = false;
    }
  }

  /**
   * The secrets the restored settings get: `null` keeps the archive's settings as
   * they are (a backup made before secrets were left out holds them in clear).
   */
  private async restoredSecrets(
    manifest: BackupManifest,
    passphrase: string | undefined,
  ): Promise<{ use: SettingsSecrets | null; result: 'restored' | 'kept' }> {
    const entry = manifest.secrets;
    if (entry === undefined) return { use: null, result: 'restored' };
    if (entry?.included === true && passphrase)
      return {
        use: await unsealSecrets(entry, passphrase),
        result: 'restored',
      };
    if (entry?.included !== true && entry?.included !== false)
      throw new BackupArchiveError('its manifest.json has unreadable secrets');
    const current = await this.settings.get();
    const mcpServers = (
      await this.db
        .collection(MCP_SERVERS_COLLECTION_NAME)
        .find({})
        .toArray()
        .catch(() => [])
    ).map((doc) => extractMcpServerSecrets(doc).secrets);
    return {
      use: {
        mcpServers,
        fields: {
          geminiApiKey: current.geminiApiKey,
          openaiApiKey: current.openaiApiKey,
          braveApiKey: current.braveApiKey,
          telegramBotToken: current.telegramBotToken,
        },
        endpoints: current.openaiCompatible,
        authProfiles: current.authProfiles.map((p) => ({
          id: p.id,
          urlPrefix: p.urlPrefix,
          header: p.header,
          secret: p.value,
        })),
      },
      result: 'kept',
    };
  }

  private get journalFile(): string {
    return join(this.dataDir, RESTORE_JOURNAL);
  }

  private async collectionNames(): Promise<Set<string>> {
    const list = await this.db
      .listCollections({}, { nameOnly: true })
      .toArray();
    return new Set(list.map((c) => c.name));
  }

  /** Staging or previous collections no journal refers to (a crash before the journal was written). */
  private async dropLeftovers(): Promise<void> {
    for (const name of await this.collectionNames())
      if (name.startsWith(STAGING_PREFIX) || name.startsWith(PREVIOUS_PREFIX))
        await this.db.dropCollection(name);
  }

  /** Writes the archive's collections into staging collections, with their indexes. */
  private async stage(
    unpacked: string,
    manifest: BackupManifest,
    names: readonly string[],
    secrets: SettingsSecrets | null,
  ): Promise<void> {
    const db = this.db;
    const entries = new Map(manifest.collections.map((c) => [c.name, c]));
    const live = await this.collectionNames();
    for (const [i, name] of names.entries()) {
      const staging = db.collection(STAGING_PREFIX + name);
      await db.createCollection(staging.collectionName);
      const entry = entries.get(name);
      const specs: Record<string, unknown>[] = [...(entry?.indexes ?? [])];
      if (live.has(name))
        specs.push(
          ...(await db.collection(name).listIndexes().toArray()).filter(
            (index) => index['name'] !== '_id_',
          ),
        );
      for (const model of Object.values(this.connection.models))
        if (model.collection.collectionName === name)
          for (const [key, options] of model.schema.indexes())
            specs.push({ ...(options ?? {}), key });
      const made = new Set<string>();
      for (const spec of specs) {
        const {
          key,
          v: _v,
          ns: _ns,
          ...options
        } = spec as unknown as {
          key: mongo.IndexSpecification;
          v?: unknown;
          ns?: unknown;
        } & mongo.CreateIndexesOptions;
        const id = JSON.stringify(key);
        if (made.has(id)) continue;
        made.add(id);
        await staging
          .createIndex(key, options)
          .catch((error: Error) =>
            this.logger.warn(
              `Index ${String(options.name ?? id)} of ${name} not restored: ${error.message}`,
            ),
          );
      }
      let sawSettings = false;
      const transform = (doc: mongo.BSON.Document) => {
        if (name === MCP_SERVERS_COLLECTION_NAME && secrets)
          return applyMcpServerSecrets(doc, secrets.mcpServers ?? []);
        if (name !== 'settings' || !secrets || !isSettingsDoc(doc)) return doc;
        sawSettings = true;
        return applySecrets(doc, secrets);
      };
      if (entry) await this.insertAll(unpacked, name, staging, transform);
      // Replacing with a backup that has no settings document: the secrets kept still need a home.
      if (
        name === 'settings' &&
        secrets &&
        !sawSettings &&
        Object.values(secrets.fields).some((value) => value)
      )
        await staging.insertOne(
          applySecrets({ _id: APP_SETTINGS_ID as never }, secrets),
        );
      if (i === 0 && names.length > 1) await restorePausePoint('staging');
    }
    await restorePausePoint('staged');
  }

  private async insertAll(
    unpacked: string,
    name: string,
    staging: mongo.Collection,
    transform: (doc: mongo.BSON.Document) => mongo.BSON.Document,
  ): Promise<void> {
    const insert = async (batch: mongo.BSON.Document[]) => {
      try {
        await staging.insertMany(batch, { ordered: true });
      } catch (error) {
        // The checks before should have caught it; the database has the last word (e.g. a partial unique index).
        const failed = error as mongo.MongoBulkWriteError;
        const index = failed.writeErrors
          ? [failed.writeErrors].flat()[0]?.index
          : undefined;
        const doc = index !== undefined ? batch[index] : undefined;
        throw new BackupArchiveError(
          `the database refused ${doc ? `${name} ${documentLabel(doc)}` : `a document of ${name}`}: ${failed.message.slice(0, 300)}`,
        );
      }
    };
    let batch: mongo.BSON.Document[] = [];
    for await (const doc of readEjsonDocuments(
      join(unpacked, 'db', `${name}.ejson`),
      this.limits.maxDocumentBytes,
    )) {
      batch.push(transform(doc));
      if (batch.length >= INSERT_BATCH) {
        await insert(batch);
        batch = [];
      }
    }
    if (batch.length) await insert(batch);
  }

  /**
   * The switch, replayable from any point: each step looks at what is there, so the
   * next start after a crash picks up where this one stopped.
   */
  private async finish(journal: RestoreJournal): Promise<void> {
    const db = this.db;
    for (const [i, name] of journal.switch.entries()) {
      const names = await this.collectionNames();
      if (!names.has(STAGING_PREFIX + name)) continue; // switched already
      if (names.has(name)) {
        if (!names.has(PREVIOUS_PREFIX + name))
          await db.renameCollection(name, PREVIOUS_PREFIX + name);
        // The live one was moved away already: this one was made since (indexes ensured at start).
        else await db.dropCollection(name);
      }
      await db.renameCollection(STAGING_PREFIX + name, name);
      if (i === 0) await restorePausePoint('switching');
    }
    for (const name of journal.drop) {
      const names = await this.collectionNames();
      if (names.has(name) && !names.has(PREVIOUS_PREFIX + name))
        await db.renameCollection(name, PREVIOUS_PREFIX + name);
      else if (names.has(name)) await db.dropCollection(name);
    }
    for (const [i, dir] of journal.dirs.entries()) {
      if (!(await exists(dir.incoming))) continue;
      if (await exists(dir.target)) {
        if (!(await exists(dir.previous)))
          await rename(dir.target, dir.previous);
        else await rm(dir.target, { recursive: true, force: true });
      }
      await rename(dir.incoming, dir.target);
      await syncDir(dirname(dir.target));
      if (i === 0) await restorePausePoint('files');
    }
    this.fileDirs.ensure();
    await restorePausePoint('cleanup');
    for (const name of await this.collectionNames())
      if (name.startsWith(PREVIOUS_PREFIX)) await db.dropCollection(name);
    await rm(journal.work, { recursive: true, force: true });
    await removeJournal(this.journalFile);
  }

  /**
   * Undoes a restore that was not committed: the live data was never touched, so
   * this removes the staging data. At start-up the uploaded archive is kept in
   * `keepArchiveIn` (the owner may want to try again).
   */
  private async rollBack(
    journal: RestoreJournal,
    keepArchiveIn: string | null,
  ): Promise<string | null> {
    for (const name of await this.collectionNames())
      if (name.startsWith(STAGING_PREFIX)) await this.db.dropCollection(name);
    let kept: string | null = null;
    if (keepArchiveIn && (await exists(journal.archive))) {
      await mkdir(keepArchiveIn, { recursive: true, mode: 0o700 });
      kept = join(
        keepArchiveIn,
        `restore-${journal.startedAt.replace(/[:.]/g, '-')}.tar.gz`,
      );
      await rename(journal.archive, kept);
      await syncDir(keepArchiveIn);
    }
    await rm(journal.work, { recursive: true, force: true });
    await removeJournal(this.journalFile);
    return kept;
  }

  /** At start-up: finishes a committed restore or rolls back one that was not. */
  private async recover(): Promise<boolean> {
    const journal = await readJournal(this.journalFile);
    if (!journal) {
      await this.dropLeftovers();
      return false;
    }
    if (journal.phase === 'committed') {
      this.logger.warn(
        'A restore was interrupted after it was committed: finishing it now',
      );
      await this.finish(journal);
      return true;
    }
    const kept = await this.rollBack(
      journal,
      join(this.dataDir, INTERRUPTED_DIR),
    );
    this.logger.warn(
      `A restore was interrupted before it was complete: the previous data stays${kept ? `; the uploaded archive is kept in ${kept}` : ''}`,
    );
    return false;
  }

  private async hasConversations(): Promise<boolean> {
    for (const name of ['chats', 'messages'])
      if ((await this.db.collection(name).estimatedDocumentCount()) > 0)
        return true;
    return false;
  }

  /** The upload, raw body or multipart field `file`, to a file (at most maxArchiveBytes). */
  private async receive(
    req: IncomingMessage,
    to: string,
  ): Promise<{ passphrase?: string }> {
    const fields: { passphrase?: string } = {};
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
          let parser: BusboyParser;
          try {
            parser = busboy({
              headers: req.headers,
              limits: { files: 1, fields: 10, parts: 11 },
            });
          } catch (error) {
            // busboy throws at once on a header it cannot use (no boundary, another charset…).
            return reject(
              new BadRequestException(
                `The upload could not be read (${error instanceof Error ? error.message : 'bad multipart header'}): send multipart/form-data with a boundary and the archive in a field named "${UPLOAD_FIELD}".`,
              ),
            );
          }
          let seen = false;
          let copying: Promise<void> | null = null;
          parser.on('field', (field, value) => {
            if (field === PASSPHRASE_FIELD) fields.passphrase = value;
          });
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
    return fields;
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
      if (
        entry.indexes.some(
          (spec) =>
            !spec ||
            typeof spec !== 'object' ||
            !spec['key'] ||
            typeof spec['key'] !== 'object',
        )
      )
        throw new BackupArchiveError(
          `its manifest.json lists an index of ${name} without a key`,
        );
      const checker = new CollectionChecker(
        name,
        this.connection,
        entry.indexes,
      );
      const problems: string[] = [];
      let count = 0;
      for await (const doc of readEjsonDocuments(
        join(unpacked, file),
        this.limits.maxDocumentBytes,
      )) {
        count += 1;
        if (problems.length < MAX_PROBLEMS)
          problems.push(...checker.check(doc));
      }
      if (problems.length)
        throw new BackupArchiveError(
          problems.slice(0, MAX_PROBLEMS).join('; '),
        );
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
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

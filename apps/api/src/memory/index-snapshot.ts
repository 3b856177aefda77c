import { writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import {
  FileAccessError,
  openDirBeneath,
  openFileBeneath,
  replaceFileBeneath,
} from '../files/contained-file';
import { readSnapshot, type LoadedSnapshot } from './snapshot-writer';

/** A change to the messages the index followed after its snapshot (replayed at start). */
export interface JournalEntry {
  seq: number;
  chatId: string;
  /** `deleted`: the chat is gone; `messages`: these messages were written; `chat`: read the whole chat again. */
  change: 'deleted' | 'messages' | 'chat';
  messageIds?: string[];
}

const FOLDER = 'memory-index';
/**
 * The message part of the memory index, saved so a start need not read every message again
 * (100,000 messages took about 20 s to read from the embedded database; the snapshot loads in
 * about 1). Binary since version 2 (`snapshotPieces`). Notes are never in it: they are few and
 * read at each start, so a forgotten note cannot come back from an older snapshot.
 */
const SNAPSHOT = 'snapshot.bin';
/** Version 1's JSON snapshot: never read now (the next start reads every message), removed with the rest. */
const OLD_SNAPSHOT = 'snapshot.json';
const JOURNAL = 'journal.ndjson';
const DISPLAY = 'DATA_DIR';

/**
 * Where the memory index keeps its snapshot and journal: `DATA_DIR/memory-index/` (0700,
 * files 0600), through the contained file calls. Not in backups: a restore rebuilds the index.
 */
export class IndexSnapshotFiles {
  /**
   * The journal, open for appending between its rewrites: every turn appends to it twice, and
   * opening it beneath DATA_DIR (a walk of descriptors, a folder created if missing) cost more
   * than the append itself. Dropped before the file is replaced or removed.
   */
  private journalHandle: Promise<FileHandle> | null = null;
  private stopped = false;

  constructor(private readonly dataDir: string) {}

  /** The snapshot, or null when there is none of this version; throws when it is damaged. */
  async read(): Promise<LoadedSnapshot | null> {
    const bytes = await this.readBytes(SNAPSHOT);
    return bytes ? readSnapshot(bytes) : null;
  }

  /** Replaces the snapshot (atomically: a temporary file renamed), written piece by piece as they come. */
  async write(snapshot: AsyncIterable<Uint8Array>): Promise<void> {
    await replaceFileBeneath(
      this.dataDir,
      DISPLAY,
      `${FOLDER}/${SNAPSHOT}`,
      async (handle) => {
        // Written before the next piece is asked for: the writer reuses its buffer.
        for await (const piece of snapshot) await handle.write(piece);
      },
      { createParents: true },
    );
  }

  async readJournal(): Promise<JournalEntry[]> {
    const text = await this.readText(JOURNAL);
    const out: JournalEntry[] = [];
    for (const line of (text ?? '').split('\n')) {
      if (!line.trim()) continue;
      try {
        out.push(JSON.parse(line) as JournalEntry);
      } catch {
        // A line cut by a crash: the count check at start catches what it held.
      }
    }
    return out;
  }

  async append(entry: JournalEntry): Promise<void> {
    const line = `${JSON.stringify(entry)}\n`;
    if (this.stopped) {
      // The app is stopping: nothing keeps a descriptor open past its end.
      const handle = await this.openJournal();
      try {
        await handle.appendFile(line, 'utf8');
      } finally {
        await handle.close();
      }
      return;
    }
    const opening = (this.journalHandle ??= this.openJournal());
    try {
      // O_APPEND: each write lands at the end of the file.
      appendLine(await opening, line);
    } catch (error) {
      // Opened again next time: a failed open or write is not kept.
      if (this.journalHandle === opening) await this.closeJournal();
      throw error;
    }
  }

  /** Closes the journal kept open; later appends open and close it each time. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.closeJournal();
  }

  private openJournal(): Promise<FileHandle> {
    return openFileBeneath(
      this.dataDir,
      DISPLAY,
      `${FOLDER}/${JOURNAL}`,
      'append',
      { createParents: true },
    );
  }

  /** Closes the journal kept open (before the file is replaced or removed). */
  private async closeJournal(): Promise<void> {
    const opening = this.journalHandle;
    this.journalHandle = null;
    if (opening)
      await opening.then((handle) => handle.close()).catch(() => undefined);
  }

  /** Keeps only the entries after `seq` (those the new snapshot does not hold). */
  async trimJournal(seq: number): Promise<void> {
    // The open handle would go on appending to the file replaced here.
    await this.closeJournal();
    const kept = (await this.readJournal()).filter((e) => e.seq > seq);
    await replaceFileBeneath(
      this.dataDir,
      DISPLAY,
      `${FOLDER}/${JOURNAL}`,
      (handle) =>
        handle.writeFile(
          kept.map((e) => `${JSON.stringify(e)}\n`).join(''),
          'utf8',
        ),
      { createParents: true },
    );
  }

  /** Removes the snapshot and the journal (a restored backup: the next start reads everything). */
  async clear(): Promise<void> {
    await this.closeJournal();
    let dir;
    try {
      dir = await openDirBeneath(this.dataDir, DISPLAY, FOLDER);
    } catch (error) {
      if (error instanceof FileAccessError && error.reason === 'missing')
        return;
      throw error;
    }
    try {
      for (const name of [SNAPSHOT, OLD_SNAPSHOT, JOURNAL])
        await dir.remove(name).catch((error: unknown) => {
          if (!(error instanceof FileAccessError && error.reason === 'missing'))
            throw error;
        });
    } finally {
      await dir.close();
    }
  }

  private async readText(name: string): Promise<string | null> {
    return (await this.readBytes(name))?.toString('utf8') ?? null;
  }

  private async readBytes(name: string): Promise<Buffer | null> {
    let handle;
    try {
      handle = await openFileBeneath(
        this.dataDir,
        DISPLAY,
        `${FOLDER}/${name}`,
        'read',
      );
    } catch (error) {
      if (error instanceof FileAccessError && error.reason === 'missing')
        return null;
      throw error;
    }
    try {
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }
}

/**
 * Appends `line` with a synchronous `write`: a line of about a hundred bytes lands in the page
 * cache in microseconds, where the asynchronous write (`appendFile`) went through libuv's thread
 * pool, waking a thread and settling promises on every turn (about 0.3 ms of the turn's sampled
 * time). `fd` is -1 once the handle's close has begun: the write then fails instead of reaching a
 * descriptor number that another file may be given.
 */
function appendLine(handle: FileHandle, line: string): void {
  const bytes = Buffer.from(line, 'utf8');
  for (let at = 0; at < bytes.length; ) {
    const { fd } = handle;
    if (fd < 0) throw new Error('the journal was closed');
    const written = writeSync(fd, bytes, at, bytes.length - at);
    if (written <= 0) throw new Error('the journal took no bytes');
    at += written;
  }
}

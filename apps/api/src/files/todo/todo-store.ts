import { Injectable } from '@nestjs/common';
import type { TodoItem, TodoLists } from '@metatronos/shared-types';
import { DateTime } from 'luxon';
import { Clock } from '../../clock/clock';
import { SettingsService } from '../../settings/settings.service';
import { FileAccessError } from '../contained-file';
import { FileDirs, type ResolvedFilePath } from '../file-dirs';
import {
  matchTodoItems,
  normaliseForMatch,
  oneLine,
  parseTodoFile,
  renderTodoFile,
  TODO_DONE_FILE,
  TODO_OPEN_FILE,
  type TodoFile,
} from './todo-file-format';

/** The seed's error texts (the model and tests match on them). */
export const TODO_ERRORS = {
  noMatch: 'no matching todo item in TODO.md',
  ambiguous: 'ambiguous todo item match',
} as const;

/** The longest item text. */
export const TODO_CONTENT_MAX_LENGTH = 2000;

/** Thrown with one of the seed's texts; the tool answers it as `{"error": …}`. */
export class TodoError extends Error {}

/** What `complete` does when text matching leaves several items: asks the model which one is meant. */
export type TodoDisambiguator = (
  query: string,
  candidates: TodoItem[],
) => Promise<number>;

export interface TodoUpdateResult {
  ok: true;
  action: 'add' | 'complete';
  updated_counts: { open_count: number; done_count: number };
  changed: { wip_added: number; wip_removed: number; done_added: number };
  entry: { created_at: string; done_at?: string; content: string };
  warnings?: string[];
}

/**
 * TODO.md (open items) and TODO.DONE.md (done items) in the state dir. Each file
 * has its own lock, so concurrent calls never lose a line; `complete` takes both,
 * always in the same order. Writes go through a temporary file and a rename.
 */
@Injectable()
export class TodoStore {
  private readonly locks = new Map<string, Promise<void>>();

  constructor(
    private readonly dirs: FileDirs,
    private readonly clock: Clock,
    private readonly settings: SettingsService,
  ) {}

  async list(): Promise<TodoLists> {
    const [open, done] = await Promise.all([
      this.read(TODO_OPEN_FILE, false),
      this.read(TODO_DONE_FILE, true),
    ]);
    return { open: open.items, done: done.items };
  }

  async add(
    content: string,
    extra: { chatId?: string; people?: string[] },
  ): Promise<TodoUpdateResult> {
    const now = await this.timestamp();
    const item: TodoItem = { content: oneLine(content), createdAt: now };
    if (extra.chatId) item.chatId = extra.chatId;
    if (extra.people?.length) item.people = extra.people.map(oneLine);
    return this.locked([TODO_OPEN_FILE], async () => {
      const open = await this.read(TODO_OPEN_FILE, false);
      open.items.push(item);
      await this.write(TODO_OPEN_FILE, open, false, now);
      const done = await this.read(TODO_DONE_FILE, true);
      return {
        ok: true,
        action: 'add',
        updated_counts: {
          open_count: open.items.length,
          done_count: done.items.length,
        },
        changed: { wip_added: 1, wip_removed: 0, done_added: 0 },
        entry: { created_at: item.createdAt, content: item.content },
      };
    });
  }

  async complete(
    query: string,
    disambiguate: TodoDisambiguator,
  ): Promise<TodoUpdateResult> {
    return this.locked([TODO_OPEN_FILE, TODO_DONE_FILE], async () => {
      const open = await this.read(TODO_OPEN_FILE, false);
      const candidates = matchTodoItems(query, open.items);
      if (candidates.length === 0) throw new TodoError(TODO_ERRORS.noMatch);
      let index = candidates[0];
      const texts = new Set(
        candidates.map((i) => normaliseForMatch(open.items[i].content)),
      );
      // Several different items match: only then is the model asked.
      if (texts.size > 1) {
        const pick = await disambiguate(
          query,
          candidates.map((i) => open.items[i]),
        );
        index = candidates[pick];
      }
      const now = await this.timestamp();
      const [item] = open.items.splice(index, 1);
      const finished: TodoItem = { ...item, doneAt: now };
      if (!finished.createdAt) finished.createdAt = now;
      const done = await this.read(TODO_DONE_FILE, true);
      done.items.push(finished);
      // Done first: a crash between the two writes leaves the item in both files, never in neither.
      await this.write(TODO_DONE_FILE, done, true, now);
      await this.write(TODO_OPEN_FILE, open, false, now);
      return {
        ok: true,
        action: 'complete',
        updated_counts: {
          open_count: open.items.length,
          done_count: done.items.length,
        },
        changed: { wip_added: 0, wip_removed: 1, done_added: 1 },
        entry: {
          created_at: finished.createdAt,
          done_at: now,
          content: finished.content,
        },
      };
    });
  }

  /** Now, `YYYY-MM-DD HH:mm` in the owner's time zone. */
  private async timestamp(): Promise<string> {
    const { timezone } = await this.settings.get();
    return DateTime.fromJSDate(this.clock.now(), { zone: timezone }).toFormat(
      'yyyy-MM-dd HH:mm',
    );
  }

  /** Through `FileDirs.resolve`: a TODO.md that is a link out of the state dir is refused, never read or written. */
  private path(name: string): ResolvedFilePath {
    const resolved = this.dirs.resolve(`file_state_dir/${name}`);
    if (!resolved.ok) throw new TodoError(`${name}: ${resolved.error}`);
    return resolved;
  }

  private async read(name: string, done: boolean): Promise<TodoFile> {
    let handle;
    try {
      handle = await this.dirs.open(this.path(name), 'read');
    } catch (error) {
      if (!(error instanceof FileAccessError)) throw error;
      if (error.reason === 'missing')
        return { createdAt: '', updatedAt: '', items: [], other: [] };
      throw new TodoError(`${name}: ${error.message}`);
    }
    try {
      return parseTodoFile(await handle.readFile('utf8'), done);
    } finally {
      await handle.close();
    }
  }

  private async write(
    name: string,
    file: TodoFile,
    done: boolean,
    now: string,
  ): Promise<void> {
    const text = renderTodoFile(
      { ...file, createdAt: file.createdAt || now, updatedAt: now },
      done,
    );
    // A new temp file (O_EXCL) renamed inside the opened state dir: no link is followed.
    try {
      await this.dirs.replace(this.path(name), (handle) =>
        handle.writeFile(text, 'utf8'),
      );
    } catch (error) {
      if (error instanceof FileAccessError)
        throw new TodoError(`${name}: ${error.message}`);
      throw error;
    }
  }

  /** Runs `work` holding the locks of `names`, taken in the order given. */
  private async locked<T>(names: string[], work: () => Promise<T>): Promise<T> {
    if (names.length === 0) return work();
    const [first, ...rest] = names;
    const before = this.locks.get(first) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = before.then(() => mine);
    this.locks.set(first, tail);
    await before;
    try {
      return await this.locked(rest, work);
    } finally {
      release();
      if (this.locks.get(first) === tail) this.locks.delete(first);
    }
  }
}

/** The toolbelt's two file dirs, as the model, the API and the console name them. */
export const FILE_DIR_NAMES = ['file_cache_dir', 'file_state_dir'] as const;
export type FileDirName = (typeof FILE_DIR_NAMES)[number];

/** One row of `GET /api/files`. */
export interface FileEntry {
  name: string;
  kind: 'file' | 'dir';
  /** Bytes (0 for a directory). */
  size: number;
  /** ISO 8601. */
  modifiedAt: string;
  /** The path to pass back to the API (`file_state_dir/notes/a.md`). */
  path: string;
}

/** `GET /api/files?path=`: a directory's entries (without `path`: the two dirs). */
export interface FileListing {
  /** The listed directory (`''` for the top, which lists the two dirs). */
  path: string;
  entries: FileEntry[];
}

/** The longest file the console shows inline (`?inline=1`); larger ones are only downloaded. */
export const FILE_INLINE_MAX_BYTES = 512 * 1024;

/** One line of TODO.md / TODO.DONE.md. */
export interface TodoItem {
  content: string;
  /** `YYYY-MM-DD HH:mm` in the owner's time zone. */
  createdAt: string;
  /** Set on done items. */
  doneAt?: string;
  /** The chat the item came from (`wa:<digits>`, `tg:<id>`). */
  chatId?: string;
  people?: string[];
}

/** `GET /api/files/todo`: the open and the done items, parsed server-side. */
export interface TodoLists {
  open: TodoItem[];
  done: TodoItem[];
}

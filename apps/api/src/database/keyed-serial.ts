/**
 * Runs the tasks of one key one after another, in the order they were given; tasks of different
 * keys run at once. A task given while its key is idle starts at once, in the caller's own tick:
 * a caller that meets no other task of its key waits for nothing more than its own work.
 *
 * For writes the database cannot take two of at once: FerretDB 1.24 rewrites the whole document
 * on update, so two updates of one document at the same moment can lose one of them.
 */
export class KeyedSerial {
  /** Per key, the last task given: it settles once every task of that key before it has. */
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key);
    const result = before ? before.then(task) : startNow(task);
    const settled = (): void => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
    const tail: Promise<void> = result.then(settled, settled);
    this.tails.set(key, tail);
    return result;
  }

  /** Keys with a task running or waiting. */
  get busyKeys(): number {
    return this.tails.size;
  }
}

/** A task that throws before its first await rejects like one that fails later. */
function startNow<T>(task: () => Promise<T>): Promise<T> {
  try {
    return task();
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

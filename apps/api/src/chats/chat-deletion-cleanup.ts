import type { Logger } from '@nestjs/common';
import type { EventEmitter2 } from '@nestjs/event-emitter';
import type { AppEventMap } from '@metatronos/shared-types';

/** Work queued here never overlaps: each call starts once every earlier one has finished. */
export class OneAtATime {
  private queue: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/**
 * Runs `cleanup(chatId)` after each deleted chat (`chats.changed`, `deleted`),
 * one after another. Failures are logged, never thrown into the emitter.
 * For the stores that keep files per chat (images, uploads).
 */
export class ChatDeletionCleanup {
  private cleanups: Promise<void> = Promise.resolve();
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly emitter: EventEmitter2,
    private readonly logger: Logger,
    /** What is deleted, for the log: "images", "attachments". */
    private readonly what: string,
    private readonly cleanup: (chatId: string) => Promise<unknown>,
  ) {}

  start(): void {
    const onChat = ({ chatId, change }: AppEventMap['chats.changed']) => {
      if (change !== 'deleted') return;
      this.cleanups = this.cleanups
        .then(() => this.cleanup(chatId))
        .then(
          () => undefined,
          (error: Error) =>
            this.logger.error(
              `Could not delete the ${this.what} of chat ${chatId}: ${error.message}`,
            ),
        );
    };
    this.emitter.on('chats.changed', onChat);
    this.unsubscribe = () => this.emitter.off('chats.changed', onChat);
  }

  /** Stops listening and waits for the cleanups already started. */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = null;
    await this.settled();
  }

  /** Resolves once the cleanups started so far have finished (tests, shutdown). */
  settled(): Promise<void> {
    return this.cleanups;
  }
}

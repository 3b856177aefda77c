import { createHash } from 'node:crypto';
import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import type { ImapFlow } from 'imapflow';
import { Types, type Model } from 'mongoose';
import type {
  AppEventMap,
  MailWatchState,
  MailWatchView,
} from '@metatronos/shared-types';
import {
  AccountCredentials,
  type EmailAccountRecord,
} from '../../accounts/account-records';
import {
  MailConnectionError,
  describeMailError,
  openImap,
} from '../../accounts/connections/mail-connection';
import { Clock } from '../../clock/clock';
import { AppEventBus } from '../../events/app-event-bus';
import { CronScheduler } from './cron-scheduler';
import {
  isStoredMailTrigger,
  jobShapeProblems,
  storedMailCursor,
} from './job-record-shape';
import type { NewMailSummary } from './mail-run-prompt';
import {
  CronJobRecord,
  type MailCursor,
  type StoredMailTrigger,
} from './schemas/cron-job.schema';

/** Reconnect delays: 1 s, doubling up to a minute. */
export const MAIL_WATCH_FIRST_RETRY_MS = 1_000;
export const MAIL_WATCH_MAX_RETRY_MS = 60_000;
/**
 * IDLE is broken and started again this often: below the client's 60 s socket
 * timeout (a quiet IDLE would otherwise read as a dead connection), and it is
 * the longest a message that slipped in while IDLE was starting waits.
 */
const IDLE_RENEW_MS = 25_000;

/** One IMAP connection watching one folder of one account, for every job that triggers on it. */
interface FolderWatch {
  key: string;
  account: EmailAccountRecord;
  folder: string;
  /** Changes when the account's IMAP settings (or password) change: the watch is then made again. */
  fingerprint: string;
  jobIds: Set<string>;
  view: MailWatchView;
  stopped: boolean;
  client: ImapFlow | null;
  /** Ends the backoff sleep early (stop). */
  wake: (() => void) | null;
  /** Set when the server announced new messages: look again before idling. */
  dirty: boolean;
  /**
   * The highest UID this watch queued a run for, per job, ahead of the stored
   * cursor (which moves when a run starts). Kept per connection: a new watch
   * starts from the stored cursors, so nothing a stopped watch dropped is lost.
   */
  queuedUpTo: Map<string, MailCursor>;
  /** Jobs whose cursor this connection has checked: only from then on is their new mail caught. */
  ready: Set<string>;
  loop: Promise<void>;
}

/**
 * Starts mail-triggered jobs: keeps one IMAP connection per watched (account,
 * folder) in IDLE, and on new messages runs each job watching it once per
 * message, through the scheduler's run path (its chat, run history, busy rule,
 * source `cron`). Each job's `mailCursor` (UIDVALIDITY + last handled UID)
 * makes a restart catch up what came while the app was down, without running
 * handled mail again. No job watching mail: no connection at all.
 */
@Injectable()
export class MailTriggerWatcher
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(MailTriggerWatcher.name);
  private readonly watches = new Map<string, FolderWatch>();
  /** Enabled mail jobs that cannot be watched (their account is gone): why. */
  private readonly unwatchable = new Map<string, MailWatchView>();
  /** Runs of one job, one after another. */
  private readonly runQueues = new Map<string, Promise<void>>();
  private syncing: Promise<void> = Promise.resolve();
  private closing = false;

  constructor(
    @InjectModel(CronJobRecord.name)
    private readonly jobs: Model<CronJobRecord>,
    private readonly credentials: AccountCredentials,
    private readonly scheduler: CronScheduler,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.sync();
  }

  /** Closes every connection before the database goes (and so tests never hang on a socket). */
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    await this.syncing;
    const watches = [...this.watches.values()];
    this.watches.clear();
    for (const watch of watches) this.stop(watch);
    await Promise.all(watches.map((w) => w.loop));
  }

  /** How many IMAP connections the watches hold open now (one per watched account and folder). */
  openConnections(): number {
    return [...this.watches.values()].filter((w) => w.client !== null).length;
  }

  /** The watch state of an enabled mail-triggered job (null: not watched, e.g. paused, or not yet looked at). */
  status(jobId: string): MailWatchView | null {
    for (const watch of this.watches.values())
      if (watch.jobIds.has(jobId))
        return watch.view.state === 'watching' && !watch.ready.has(jobId)
          ? { state: 'connecting', reason: null }
          : { ...watch.view };
    return this.unwatchable.get(jobId) ?? null;
  }

  @OnEvent('cronjobs.changed')
  async onJobsChanged(event: AppEventMap['cronjobs.changed']): Promise<void> {
    // The watcher's own state announcements change nothing it watches.
    if (event.by === 'app') return;
    await this.sync();
  }

  @OnEvent('accounts.changed')
  async onAccountsChanged(): Promise<void> {
    await this.sync();
  }

  /** A restored backup brings other jobs, accounts and cursors. */
  @OnEvent('backup.restored')
  async onBackupRestored(): Promise<void> {
    await this.sync();
  }

  /** Makes the open connections match the enabled mail jobs and their accounts (one at a time). */
  sync(): Promise<void> {
    const next = this.syncing.then(() => this.reconcile());
    this.syncing = next.catch((error: Error) =>
      this.logger.error(`Could not update the mail watches: ${error.message}`),
    );
    return this.syncing;
  }

  private async reconcile(): Promise<void> {
    if (this.closing) return;
    const jobs = (await this.jobs.collection
      .find({ mailTrigger: { $ne: null } })
      .toArray()) as unknown as CronJobRecord[];
    const accounts = new Map(
      (await this.credentials.list('email'))
        .filter((a): a is EmailAccountRecord => a.kind === 'email')
        .map((a) => [a.id, a]),
    );
    const wanted = new Map<
      string,
      { account: EmailAccountRecord; folder: string; jobIds: Set<string> }
    >();
    const unwatchable = new Map<string, MailWatchView>();
    for (const job of jobs) {
      if (job.enabled === false || jobShapeProblems(job).length) continue;
      const trigger: unknown = job.mailTrigger;
      if (!isStoredMailTrigger(trigger)) continue;
      const jobId = job._id.toHexString();
      const account = accounts.get(trigger.accountId);
      if (!account) {
        unwatchable.set(jobId, {
          state: 'error',
          reason:
            'The email account this job watches was removed. Choose another account for the job.',
        });
        continue;
      }
      const key = watchKey(trigger);
      const entry = wanted.get(key) ?? {
        account,
        folder: trigger.folder,
        jobIds: new Set<string>(),
      };
      entry.jobIds.add(jobId);
      wanted.set(key, entry);
    }
    const gone = [...this.unwatchable.keys()].filter(
      (id) => !unwatchable.has(id),
    );
    const newlyUnwatchable = [...unwatchable.keys()].filter(
      (id) => !this.unwatchable.has(id),
    );
    this.unwatchable.clear();
    for (const [id, view] of unwatchable) this.unwatchable.set(id, view);
    for (const [key, watch] of this.watches) {
      const want = wanted.get(key);
      if (
        !want ||
        fingerprint(want.account, want.folder) !== watch.fingerprint
      ) {
        this.watches.delete(key);
        this.stop(watch);
        this.announce([...watch.jobIds]);
      }
    }
    for (const [key, want] of wanted) {
      const watch = this.watches.get(key);
      if (watch) {
        const added = [...want.jobIds].some((id) => !watch.jobIds.has(id));
        for (const id of watch.jobIds)
          if (!want.jobIds.has(id)) {
            watch.ready.delete(id);
            watch.queuedUpTo.delete(id);
          }
        watch.jobIds = want.jobIds;
        // A renamed account (same server and login) keeps its connection; runs name it anew.
        watch.account = want.account;
        // A job that joins an open watch starts its cursor at the next look.
        if (added) this.lookAgain(watch);
        continue;
      }
      this.start(key, want.account, want.folder, want.jobIds);
    }
    this.announce([...gone, ...newlyUnwatchable]);
  }

  private start(
    key: string,
    account: EmailAccountRecord,
    folder: string,
    jobIds: Set<string>,
  ): void {
    const watch: FolderWatch = {
      key,
      account,
      folder,
      fingerprint: fingerprint(account, folder),
      jobIds,
      view: { state: 'connecting', reason: null },
      stopped: false,
      client: null,
      wake: null,
      dirty: true,
      queuedUpTo: new Map(),
      ready: new Set(),
      loop: Promise.resolve(),
    };
    this.watches.set(key, watch);
    this.announce([...jobIds]);
    watch.loop = this.keepWatching(watch);
  }

  private stop(watch: FolderWatch): void {
    watch.stopped = true;
    watch.client?.close();
    watch.wake?.();
  }

  /** Connects, watches until the connection ends, and reconnects with backoff until stopped. */
  private async keepWatching(watch: FolderWatch): Promise<void> {
    let delay = MAIL_WATCH_FIRST_RETRY_MS;
    while (!watch.stopped) {
      let reason: string;
      try {
        await this.watchOnce(watch, () => (delay = MAIL_WATCH_FIRST_RETRY_MS));
        reason = `The connection to the IMAP server ${watch.account.imap.host}:${watch.account.imap.port} was closed; reconnecting.`;
      } catch (error) {
        reason =
          error instanceof MailConnectionError
            ? error.message
            : describeMailError('IMAP', watch.account.imap, error);
      }
      if (watch.stopped) break;
      this.setView(watch, 'error', reason);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        timer.unref();
        watch.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      watch.wake = null;
      delay = Math.min(delay * 2, MAIL_WATCH_MAX_RETRY_MS);
    }
  }

  /** One connection: open the folder, look for new mail, IDLE, look again on EXISTS; returns when it closes. */
  private async watchOnce(
    watch: FolderWatch,
    connected: () => void,
  ): Promise<void> {
    const client = await openImap(watch.account.imap);
    watch.client = client;
    const closed = new Promise<void>((resolve) =>
      client.once('close', () => resolve()),
    );
    let renew: NodeJS.Timeout | null = null;
    try {
      if (watch.stopped) return;
      const lock = await client
        .getMailboxLock(watch.folder)
        .catch((error: unknown) => {
          throw new MailConnectionError(
            `The folder "${watch.folder}" cannot be opened in ${watch.account.address}: ${folderProblem(error)}.`,
          );
        });
      try {
        client.on('exists', () => {
          watch.dirty = true;
          // Any command breaks IDLE, so the loop below looks again.
          if (client.idling) this.lookAgain(watch);
        });
        renew = setInterval(() => this.lookAgain(watch), IDLE_RENEW_MS);
        renew.unref();
        watch.dirty = true;
        while (!watch.stopped && client.usable) {
          if (watch.dirty) {
            watch.dirty = false;
            await this.look(watch, client);
            if (watch.view.state !== 'watching') {
              this.setView(watch, 'watching', null);
              connected();
            }
            continue;
          }
          const idle = client.idle();
          // A close can win the race; the IDLE's own rejection then has no reader.
          idle.catch(() => undefined);
          await Promise.race([idle, closed]);
        }
      } finally {
        lock.release();
      }
    } finally {
      if (renew) clearInterval(renew);
      watch.client = null;
      client.close();
    }
  }

  /** Breaks IDLE (if any) so the watch loop looks for new messages again. */
  private lookAgain(watch: FolderWatch): void {
    watch.dirty = true;
    const client = watch.client;
    if (client?.usable && client.idling)
      void client.noop().catch(() => undefined);
  }

  /** For every job on this folder: queue a run per message above its cursor (a first look only sets the cursor). */
  private async look(watch: FolderWatch, client: ImapFlow): Promise<void> {
    const mailbox = client.mailbox;
    if (!mailbox) throw new Error('The folder is no longer open.');
    const uidValidity = mailbox.uidValidity.toString();
    for (const jobId of [...watch.jobIds]) {
      const job = (await this.jobs.collection.findOne({
        _id: new Types.ObjectId(jobId),
      })) as CronJobRecord | null;
      if (!job || !sameTrigger(job, watch)) continue;
      const stored = storedMailCursor(job.mailCursor);
      if (!stored || stored.uidValidity !== uidValidity) {
        // First watch, or the server renumbered the folder: start at its newest message, so old mail never floods.
        const top = await this.topUid(client);
        watch.queuedUpTo.delete(jobId);
        await this.saveCursor(job._id, watch, { uidValidity, lastUid: top });
        this.markReady(watch, jobId);
        continue;
      }
      this.markReady(watch, jobId);
      const queued = watch.queuedUpTo.get(jobId);
      const after = Math.max(
        stored.lastUid,
        queued?.uidValidity === uidValidity ? queued.lastUid : 0,
      );
      const messages = (
        await client.fetchAll(
          `${after + 1}:*`,
          { uid: true, envelope: true, internalDate: true },
          { uid: true },
        )
      )
        // `n:*` names the newest message even when its UID is below n.
        .filter((m) => m.uid > after)
        .sort((a, b) => a.uid - b.uid);
      for (const message of messages) {
        const envelope = message.envelope;
        const sender = envelope?.from?.[0];
        const received =
          message.internalDate instanceof Date
            ? message.internalDate
            : typeof message.internalDate === 'string'
              ? new Date(message.internalDate)
              : this.clock.now();
        watch.queuedUpTo.set(jobId, { uidValidity, lastUid: message.uid });
        this.enqueue(job._id, watch, uidValidity, {
          uid: message.uid,
          folder: watch.folder,
          account: watch.account.address,
          from: sender
            ? sender.name
              ? `${sender.name} <${sender.address ?? ''}>`
              : (sender.address ?? '')
            : '',
          subject: envelope?.subject ?? '',
          date: envelope?.date instanceof Date ? envelope.date : null,
          receivedAt: Number.isNaN(received.getTime())
            ? this.clock.now()
            : received,
        });
      }
    }
  }

  private markReady(watch: FolderWatch, jobId: string): void {
    if (watch.ready.has(jobId)) return;
    watch.ready.add(jobId);
    // Announced once the watch reads as working; before that its own change says it.
    if (watch.view.state === 'watching') this.announce([jobId]);
  }

  /** The folder's highest UID now (0 when it is empty and has never held mail). */
  private async topUid(client: ImapFlow): Promise<number> {
    const mailbox = client.mailbox;
    if (mailbox && mailbox.exists > 0) {
      const last = await client.fetchOne('*', { uid: true });
      if (last) return last.uid;
    }
    return mailbox ? Math.max(0, mailbox.uidNext - 1) : 0;
  }

  /**
   * Runs the job for one message after its earlier ones. The cursor moves when
   * the run starts: a restart never runs a message twice, and one queued but
   * not yet started when the app stopped is found again at the next start.
   */
  private enqueue(
    jobId: Types.ObjectId,
    watch: FolderWatch,
    uidValidity: string,
    mail: NewMailSummary,
  ): void {
    const id = jobId.toHexString();
    const stillWanted = () =>
      !this.closing && !watch.stopped && watch.jobIds.has(id);
    const previous = this.runQueues.get(id) ?? Promise.resolve();
    const next = previous.then(async () => {
      if (!stillWanted()) return;
      try {
        await this.saveCursor(jobId, watch, {
          uidValidity,
          lastUid: mail.uid,
        });
        await this.scheduler.runForMail(jobId, mail, stillWanted);
      } catch (error) {
        this.logger.error(
          `Could not run a mail-triggered job: ${(error as Error).message}`,
        );
      }
    });
    this.runQueues.set(id, next);
    void next.finally(() => {
      if (this.runQueues.get(id) === next) this.runQueues.delete(id);
    });
  }

  /** Stores the cursor unless the job's trigger changed meanwhile (its cursor then belongs to another folder). */
  private async saveCursor(
    jobId: Types.ObjectId,
    watch: FolderWatch,
    cursor: MailCursor,
  ): Promise<void> {
    await this.jobs.collection.updateOne(
      {
        _id: jobId,
        'mailTrigger.accountId': watch.account.id,
        'mailTrigger.folder': watch.folder,
      },
      { $set: { mailCursor: cursor } },
    );
  }

  private setView(
    watch: FolderWatch,
    state: MailWatchState,
    reason: string | null,
  ): void {
    if (watch.stopped) return;
    if (watch.view.state === state && watch.view.reason === reason) return;
    watch.view = { state, reason };
    if (state === 'error')
      this.logger.warn(`A mail watch is not working: ${reason ?? ''}`);
    this.announce([...watch.jobIds]);
  }

  /** The console reloads the jobs on `cronjobs.changed`; `by: "app"` keeps this watcher from reacting to itself. */
  private announce(jobIds: string[]): void {
    if (this.closing) return;
    const at = this.clock.now().toISOString();
    for (const jobId of jobIds)
      this.events.emit('cronjobs.changed', {
        jobId,
        change: 'updated',
        by: 'app',
        at,
      });
  }
}

function watchKey(trigger: StoredMailTrigger): string {
  return `${trigger.accountId}\n${trigger.folder}`;
}

function sameTrigger(job: CronJobRecord, watch: FolderWatch): boolean {
  const trigger: unknown = job.mailTrigger;
  return (
    job.enabled !== false &&
    isStoredMailTrigger(trigger) &&
    trigger.accountId === watch.account.id &&
    trigger.folder === watch.folder
  );
}

/** What identifies a connection (hashed: the password is part of it and is kept nowhere else here). */
function fingerprint(account: EmailAccountRecord, folder: string): string {
  const { host, port, secure, user, password } = account.imap;
  return createHash('sha256')
    .update(JSON.stringify([host, port, secure, user, password, folder]))
    .digest('hex');
}

function folderProblem(error: unknown): string {
  const e = (error ?? {}) as { responseText?: string; message?: string };
  return (
    (e.responseText ?? e.message ?? 'unknown error').trim() || 'unknown error'
  );
}

import { createHash } from 'node:crypto';
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import type { ImapFlow } from 'imapflow';
import type { AppEventMap } from '@metatronos/shared-types';
import type { EmailAccountRecord } from '../account-records';
import { MailConnectionError, openImap } from '../connections/mail-connection';
import { AccountMailCache, SessionFlags, SessionSearches } from './mail-cache';
import { Mailbox, MailboxProblem, commandError } from './mailbox';

/** Connections kept open per account: a search and a read at once, more wait their turn. */
export const IMAP_POOL_SIZE = 2;
/** An unused connection is logged out after this long. */
export const IMAP_IDLE_MS = 60_000;

interface Lease {
  client: ImapFlow;
  /** Taken from the idle ones (its socket may have died since), not opened for this call. */
  reused: boolean;
  returned: boolean;
}

interface AccountPool {
  accountId: string;
  /** The IMAP settings the connections logged in with (hashed): others need new ones. */
  settings: string;
  idle: Array<{ client: ImapFlow; timer: NodeJS.Timeout }>;
  /** Connections open or being opened, idle or lent. */
  open: number;
  waiting: Array<() => void>;
  retired: boolean;
  /** What the account's mailbox says that does not change; dropped with the pool or its last connection. */
  cache: AccountMailCache;
}

/** Used by a lent connection that died (not by a command the server refused). */
class DeadConnection extends Error {}

/**
 * A few IMAP connections per email account, kept logged in between `email_actions` calls: opening one
 * (TCP, TLS, greeting, login) cost about a second a call. Each call has a connection to itself (mailbox
 * selection and locks are per connection); calls beyond IMAP_POOL_SIZE wait for one. Every connection
 * is opened by `openImap`, so the outbound address guard checks (and pins) each one. A connection found
 * dead is replaced once; an account edited or deleted (or its IMAP settings changed by a restore) and the
 * shutdown close its connections. Each account's AccountMailCache lives here, with its connections: it is
 * dropped with them (on those events, and when the last one is logged out idle or found dead), so it never
 * outlives an account's settings. Each connection has its SessionFlags.
 */
@Injectable()
export class ImapPool implements OnApplicationShutdown {
  private readonly pools = new Map<string, AccountPool>();
  private readonly sessions = new WeakMap<
    ImapFlow,
    { flags: SessionFlags; searches: SessionSearches }
  >();

  /** Runs `work` on a logged-in connection of the account; stopping the call closes that connection. */
  async use<T>(
    account: EmailAccountRecord,
    signal: AbortSignal,
    work: (mailbox: Mailbox) => Promise<T>,
  ): Promise<T> {
    if (signal.aborted) throw new MailboxProblem('The request was stopped.');
    const pool = this.poolOf(account);
    let lease = await this.acquire(pool, account, signal);
    try {
      try {
        return await this.attempt(account, pool, lease, signal, work);
      } catch (error) {
        if (!(error instanceof DeadConnection)) throw error;
        if (!lease.reused) throw new MailConnectionError(error.message);
        // Its socket died while it waited: one new connection.
        this.giveBack(pool, lease);
        lease = await this.acquire(pool, account, signal, true);
        return await this.attempt(account, pool, lease, signal, work).catch(
          (again: unknown) => {
            throw again instanceof DeadConnection
              ? new MailConnectionError(again.message)
              : again;
          },
        );
      }
    } finally {
      this.giveBack(pool, lease);
    }
  }

  /** Connections open for the account (idle or in use). */
  openConnections(accountId: string): number {
    return this.pools.get(accountId)?.open ?? 0;
  }

  /** What the account's cache holds (null when it has no pool). */
  cacheUsage(accountId: string): ReturnType<AccountMailCache['usage']> | null {
    return this.pools.get(accountId)?.cache.usage() ?? null;
  }

  @OnEvent('accounts.changed')
  onAccountChanged(event: AppEventMap['accounts.changed']): void {
    if (event.change === 'created') return;
    const pool = this.pools.get(event.id);
    if (pool) this.retire(pool);
  }

  async onApplicationShutdown(): Promise<void> {
    const closing = [...this.pools.values()].flatMap((pool) =>
      this.retire(pool),
    );
    await Promise.all(closing);
  }

  private poolOf(account: EmailAccountRecord): AccountPool {
    const { host, port, secure, user, password } = account.imap;
    const settings = createHash('sha256')
      .update(JSON.stringify([host, port, secure, user, password]))
      .digest('hex');
    const current = this.pools.get(account.id);
    if (current?.settings === settings) return current;
    if (current) this.retire(current);
    const pool: AccountPool = {
      accountId: account.id,
      settings,
      idle: [],
      open: 0,
      waiting: [],
      retired: false,
      cache: new AccountMailCache(),
    };
    this.pools.set(account.id, pool);
    return pool;
  }

  private async acquire(
    pool: AccountPool,
    account: EmailAccountRecord,
    signal: AbortSignal,
    fresh = false,
  ): Promise<Lease> {
    for (;;) {
      if (signal.aborted) throw new MailboxProblem('The request was stopped.');
      while (!fresh && pool.idle.length) {
        const { client, timer } = pool.idle.pop() as AccountPool['idle'][0];
        clearTimeout(timer);
        if (alive(client)) return { client, reused: true, returned: false };
        this.closed(pool);
        client.close();
      }
      if (pool.open < IMAP_POOL_SIZE) {
        pool.open++;
        try {
          const client = await openImap(account.imap);
          return { client, reused: false, returned: false };
        } catch (error) {
          this.closed(pool);
          this.wakeOne(pool);
          throw error;
        }
      }
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        signal.addEventListener('abort', stop, { once: true });
        pool.waiting.push(() => {
          signal.removeEventListener('abort', stop);
          resolve();
        });
      });
    }
  }

  private async attempt<T>(
    account: EmailAccountRecord,
    pool: AccountPool,
    lease: Lease,
    signal: AbortSignal,
    work: (mailbox: Mailbox) => Promise<T>,
  ): Promise<T> {
    const abort = () => lease.client.close();
    signal.addEventListener('abort', abort, { once: true });
    try {
      return await work(this.mailboxOn(lease.client, pool.cache));
    } catch (error) {
      if (signal.aborted) throw new MailboxProblem('The request was stopped.');
      if (
        error instanceof MailboxProblem ||
        error instanceof MailConnectionError
      )
        throw error;
      const message = commandError(account, error);
      throw alive(lease.client)
        ? new MailConnectionError(message)
        : new DeadConnection(message);
    } finally {
      signal.removeEventListener('abort', abort);
    }
  }

  /** Back to the idle ones, or closed when it died or its account's settings changed. */
  private giveBack(pool: AccountPool, lease: Lease): void {
    if (lease.returned) return;
    lease.returned = true;
    const { client } = lease;
    if (pool.retired || !alive(client)) {
      this.closed(pool);
      void logOut(client);
    } else {
      const timer = setTimeout(() => {
        const at = pool.idle.findIndex((entry) => entry.client === client);
        if (at < 0) return;
        pool.idle.splice(at, 1);
        this.closed(pool);
        void logOut(client);
      }, IMAP_IDLE_MS);
      timer.unref();
      pool.idle.push({ client, timer });
    }
    this.wakeOne(pool);
  }

  /** One connection fewer; with none left, the account's cache goes too (bounded in time, not only size). */
  private closed(pool: AccountPool): void {
    pool.open--;
    if (pool.open === 0) pool.cache.clear();
  }

  /** The connection with what it knows of its selected folder (kept with it from its first call). */
  private mailboxOn(client: ImapFlow, cache: AccountMailCache): Mailbox {
    let session = this.sessions.get(client);
    if (!session) {
      session = {
        flags: new SessionFlags(client),
        searches: new SessionSearches(client),
      };
      this.sessions.set(client, session);
    }
    return new Mailbox(client, cache, session.flags, session.searches);
  }

  private wakeOne(pool: AccountPool): void {
    pool.waiting.shift()?.();
  }

  /** Closes its idle connections now and the lent ones when they come back; calls waiting still get theirs. */
  private retire(pool: AccountPool): Promise<void>[] {
    pool.retired = true;
    pool.cache.clear();
    if (this.pools.get(pool.accountId) === pool)
      this.pools.delete(pool.accountId);
    const closing = pool.idle.splice(0).map(({ client, timer }) => {
      clearTimeout(timer);
      this.closed(pool);
      return logOut(client);
    });
    for (const wake of pool.waiting.splice(0)) wake();
    return closing;
  }
}

/** Whether the connection can still carry a command (a socket closed under it leaves `usable` set). */
function alive(client: ImapFlow): boolean {
  const socket = (client as { socket?: { destroyed?: boolean } }).socket;
  return client.usable && !!socket && !socket.destroyed;
}

/** Logs out politely, closing the socket if the server does not answer soon. */
async function logOut(client: ImapFlow): Promise<void> {
  const timeout = new Promise<void>((resolve) =>
    setTimeout(resolve, 2_000).unref(),
  );
  await Promise.race([client.logout().catch(() => undefined), timeout]);
  client.close();
}

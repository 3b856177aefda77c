import { ImapFlow } from 'imapflow';
import { ToolTurn } from '../src/actions/tool-turn';
import {
  startGreenMail,
  type GreenMailServer,
} from '../../../tools/mail-servers/mail-servers';
import { ImapPool } from '../src/accounts/email/imap-pool';
import { AppEventBus } from '../src/events/app-event-bus';
import { SettingsService } from '../src/settings/settings.service';
import { storeEmailAccount } from './support/accounts-kit';
import { withImap } from './support/mail-kit';
import { createTestApp, type TestApp } from './support/test-app';
import { callTool } from './support/call-tool';

type Result = Record<string, unknown> & { error?: string };
interface Summary {
  uid: number;
  subject: string;
  flags: string[];
}

/** The flags a result shows, without \Recent (which the server gives the first session to see a mail). */
const shown = (flags: unknown) =>
  (flags as string[]).filter((f) => f !== '\\Recent').sort();

const ANN_PASSWORD = 'ann-cache-password-3Xr';

/** A message as `append` takes it. */
const raw = (subject: string, text = `About ${subject}.`) =>
  [
    'From: Bob <bob@example.test>',
    'To: ann@example.test',
    `Subject: ${subject}`,
    `Message-ID: <${subject.replace(/\W+/g, '-')}@example.test>`,
    'Date: Mon, 02 Mar 2026 10:00:00 +0000',
    '',
    text,
    '',
  ].join('\r\n');

/**
 * The cache behind email_actions (AccountMailCache, SessionFlags): what it serves must be what the
 * server says now. Changes are made by another IMAP client, as a phone or webmail would.
 */
describe('email_actions cache against GreenMail', () => {
  let mail: GreenMailServer;
  let t: TestApp;
  let annId: string;
  const ann = () => mail.users[0];
  const pool = () => t.app.get(ImapPool);

  beforeAll(async () => {
    mail = await startGreenMail([{ login: 'ann', password: ANN_PASSWORD }]);
    t = await createTestApp();
    annId = await storeEmailAccount(t.app, mail, ann());
    await withImap(mail, ann(), async (client) => {
      await client.mailboxCreate('Archive');
      for (const subject of ['One', 'Two', 'Three', 'Four'])
        await client.append('INBOX', raw(subject), ['\\Seen']);
      await client.append('Archive', raw('Kept'));
    });
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    await t?.close();
    await mail?.stop();
  });

  async function call(args: Record<string, unknown>): Promise<Result> {
    return callTool<Result>(t.app, 'email_actions', args, {
      // A reply is done at once, not held for the owner: what it answers is under test.
      settings: {
        ...(await t.app.get(SettingsService).get()),
        alwaysConfirm: false,
      },
      // Each call its own turn: one that has read mail would hold a reply for approval.
      turn: new ToolTurn({ source: 'chat', runId: null }),
    });
  }
  const search = (args: Record<string, unknown> = {}) =>
    call({ action: 'search', ...args });
  const listed = (result: Result) => result['messages'] as Summary[];
  const uidOf = async (subject: string) => {
    const found = listed(await search()).find((m) => m.subject === subject);
    if (!found) throw new Error(`no '${subject}' listed`);
    return found.uid;
  };
  /** Counts the IMAP FETCH, LIST and SEARCH commands the app sends during `work`. */
  async function commandsDuring(work: () => Promise<unknown>) {
    const fetches = jest.spyOn(ImapFlow.prototype, 'fetch');
    const lists = jest.spyOn(ImapFlow.prototype, 'list');
    const searches = jest.spyOn(ImapFlow.prototype, 'search');
    await work();
    const counts = {
      fetch: fetches.mock.calls.length,
      list: lists.mock.calls.length,
      search: searches.mock.calls.length,
    };
    jest.restoreAllMocks();
    return counts;
  }

  it('answers a repeated search and read from the cache: no FETCH, no LIST, the same result', async () => {
    const first = await search();
    const uid = await uidOf('Two');
    const read = await call({ action: 'read', uid });
    expect(read['subject']).toBe('Two');
    expect(shown(read['flags'])).toEqual(['\\Seen']);
    let again: Result[] = [];
    const sent = await commandsDuring(async () => {
      again = [await search(), await call({ action: 'read', uid })];
    });
    // The search is answered after a NOOP; the read asks only whether its UID is still there.
    expect(sent).toEqual({ fetch: 0, list: 0, search: 1 });
    expect(again).toEqual([first, read]);
    expect(pool().cacheUsage(annId)).toMatchObject({ envelopes: 4, bodies: 1 });
  });

  it('lists a new mail in the next search', async () => {
    const before = await search();
    await withImap(mail, ann(), (client) =>
      client.append('INBOX', raw('Five, just in')),
    );
    const after = await search();
    expect(after['total']).toBe((before['total'] as number) + 1);
    expect(listed(after)[0].subject).toBe('Five, just in');
    expect(shown(listed(after)[0].flags)).toEqual([]);
    expect(listed(after).slice(1)).toEqual(listed(before));
  });

  it('shows the flags of now, changed elsewhere or by mark, in search and read', async () => {
    const uid = await uidOf('Three');
    await call({ action: 'read', uid });
    await withImap(mail, ann(), async (client) => {
      const lock = await client.getMailboxLock('INBOX');
      try {
        await client.messageFlagsAdd(String(uid), ['\\Flagged'], {
          uid: true,
        });
        await client.messageFlagsRemove(String(uid), ['\\Seen'], {
          uid: true,
        });
      } finally {
        lock.release();
      }
    });
    const three = () =>
      search().then((r) => listed(r).find((m) => m.uid === uid));
    expect(shown((await three())?.flags)).toEqual(['\\Flagged']);
    expect(shown((await call({ action: 'read', uid }))['flags'])).toEqual([
      '\\Flagged',
    ]);
    // Marked through the tool while a second pooled connection holds the folder too.
    await Promise.all([search(), call({ action: 'read', uid })]);
    expect(
      await call({ action: 'mark', uid, seen: true, flagged: false }),
    ).not.toHaveProperty('error');
    for (let i = 0; i < 3; i++) {
      const [listedNow, readNow] = await Promise.all([
        three(),
        call({ action: 'read', uid }),
      ]);
      expect(shown(listedNow?.flags)).toEqual(['\\Seen']);
      expect(shown(readNow['flags'])).toEqual(['\\Seen']);
    }
  });

  it('does not answer from the cache for a mail deleted or moved elsewhere', async () => {
    const moved = await uidOf('One');
    const deleted = await uidOf('Four');
    for (const uid of [moved, deleted]) await call({ action: 'read', uid });
    await withImap(mail, ann(), async (client) => {
      const lock = await client.getMailboxLock('INBOX');
      try {
        await client.messageMove(String(moved), 'Archive', { uid: true });
        await client.messageDelete(String(deleted), { uid: true });
      } finally {
        lock.release();
      }
    });
    const subjects = listed(await search()).map((m) => m.subject);
    expect(subjects).not.toContain('One');
    expect(subjects).not.toContain('Four');
    for (const uid of [moved, deleted]) {
      const missing = `No message with uid ${uid} in folder 'INBOX'`;
      expect(await call({ action: 'read', uid })).toEqual({ error: missing });
      expect(await call({ action: 'reply', uid, text: 'Thanks!' })).toEqual({
        error: missing,
      });
    }
    expect(
      listed(await search({ folder: 'Archive' })).map((m) => m.subject),
    ).toContain('One');
  });

  it('finds a folder made elsewhere, and says so for one deleted elsewhere', async () => {
    expect(await search({ folder: 'Projects' })).toEqual({
      error: "No folder 'Projects' in this mailbox. Folders: INBOX, Archive",
    });
    await withImap(mail, ann(), async (client) => {
      await client.mailboxCreate('Projects');
      await client.append('Projects', raw('Plan'));
    });
    expect(
      listed(await search({ folder: 'Projects' })).map((m) => m.subject),
    ).toEqual(['Plan']);
    await withImap(mail, ann(), (client) => client.mailboxDelete('Projects'));
    expect(await search({ folder: 'Projects' })).toEqual({
      error: "No folder 'Projects' in this mailbox. Folders: INBOX, Archive",
    });
  });

  it('shows the new messages of a folder made again under the same name (new UIDVALIDITY)', async () => {
    const before = listed(await search({ folder: 'Archive' }));
    const kept = before.find((m) => m.subject === 'Kept')?.uid;
    expect(
      await call({ action: 'read', folder: 'Archive', uid: kept }),
    ).toMatchObject({ subject: 'Kept' });
    // Both pooled connections on INBOX: the server closes a session whose selected folder is deleted,
    // which would drop the cache with it; here it must tell the new folder by its UIDVALIDITY.
    await Promise.all([search(), search()]);
    const connections = pool().openConnections(annId);
    await withImap(mail, ann(), async (client) => {
      await client.mailboxDelete('Archive');
      await client.mailboxCreate('Archive');
      await client.append('Archive', raw('Fresh start'));
    });
    const after = await search({ folder: 'Archive' });
    expect(listed(after).map((m) => m.subject)).toEqual(['Fresh start']);
    // The server numbers the new folder's messages from 1 again: the same UID, another message.
    const fresh = listed(after)[0].uid;
    expect(fresh).toBe(kept);
    expect(
      await call({ action: 'read', folder: 'Archive', uid: fresh }),
    ).toMatchObject({ subject: 'Fresh start', text: 'About Fresh start.' });
    expect(pool().openConnections(annId)).toBe(connections);
  });

  it('drops the account’s cache when the account is edited, and at shutdown', async () => {
    await search();
    expect(pool().cacheUsage(annId)?.envelopes).toBeGreaterThan(0);
    await t.app.get(AppEventBus).emitAndWait('accounts.changed', {
      id: annId,
      change: 'updated',
      at: new Date().toISOString(),
    });
    expect(pool().cacheUsage(annId)).toBeNull();
    await search();
    expect(pool().cacheUsage(annId)?.envelopes).toBeGreaterThan(0);
    const cache = (
      pool() as unknown as {
        pools: Map<string, { cache: { usage(): { envelopes: number } } }>;
      }
    ).pools.get(annId)?.cache;
    await pool().onApplicationShutdown();
    expect(cache?.usage().envelopes).toBe(0);
    expect(pool().cacheUsage(annId)).toBeNull();
  });
});

import { join } from 'node:path';
import type { Page } from '@playwright/test';
// Seeding drafts needs the database, which the e2e support does not expose (see seedDraft).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { MongoClient, ObjectId } from 'mongodb';
import {
  startGreenMail,
  type GreenMailServer,
} from '../../../tools/mail-servers/mail-servers';
import { startApp, type RunningApp } from './support/app-server';
import { expect, ownerSession, test as base } from './support/fixtures';

const LOGIN = 'ann';
const PASSWORD = 'right-password';
/** What the console shows for every stored password (PASSWORD_MASK). */
const MASK = '••••••••';

/** A MetatronOS of its own and a GreenMail (IMAP + SMTP, plain, loopback) in the worker. */
const test = base.extend<object, { mail: GreenMailServer; app: RunningApp }>({
  mail: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const mail = await startGreenMail([{ login: LOGIN, password: PASSWORD }]);
      await use(mail);
      await mail.stop();
    },
    { scope: 'worker', timeout: 60_000 },
  ],
  app: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const app = await startApp();
      await use(app);
      await app.stop();
    },
    { scope: 'worker' },
  ],
});

test.use({ appName: 'accounts' });
test.describe.configure({ mode: 'serial' });

/** Fills the add form for GreenMail: plain IMAP and SMTP (TLS unticked first, which moves the ports). */
async function fillGreenMail(
  page: Page,
  mail: GreenMailServer,
  password: string,
): Promise<void> {
  const form = page.getByTestId('account-form');
  await form.getByTestId('account-name-input').fill('Ann');
  await form.getByTestId('account-address-input').fill(mail.users[0].address);
  await form.getByTestId('imap-secure').getByRole('checkbox').uncheck();
  await form.getByTestId('smtp-secure').getByRole('checkbox').uncheck();
  await expect(form.getByTestId('tls-warning')).toContainText(
    'IMAP and SMTP send your password and messages unencrypted',
  );
  await form.getByTestId('imap-host').fill(mail.host);
  await form.getByTestId('imap-port').fill(String(mail.imapPort));
  await form.getByTestId('imap-user').fill(LOGIN);
  await form.getByTestId('imap-password').fill(password);
  await form.getByTestId('smtp-host').fill(mail.host);
  await form.getByTestId('smtp-port').fill(String(mail.smtpPort));
}

/**
 * NOTE FOR THE LEAD: the e2e support gives no database handle, so this reaches the embedded database on
 * its Unix socket in the app's data dir (`<dataDir>/run/ferretdb.sock`, see embeddedSocketPath in
 * apps/api/src/database/embedded-database.ts; a long data dir path would move it elsewhere) and inserts
 * into `email_drafts` directly. The document's field names follow EmailDraftView (`_id` as the id,
 * dates as Date): check them against the backend's draft schema once it is merged.
 */
async function seedDraft(
  app: RunningApp,
  draft: {
    accountId: string;
    accountAddress: string;
    to: string[];
    subject: string;
    text: string;
  },
): Promise<string> {
  const socket = join(app.dataDir, 'run', 'ferretdb.sock');
  const client = await MongoClient.connect(
    `mongodb://${encodeURIComponent(socket)}/`,
  );
  try {
    const _id = new ObjectId();
    await client.db('metatronos').collection('email_drafts').insertOne({
      _id,
      accountId: draft.accountId,
      accountAddress: draft.accountAddress,
      action: 'send',
      to: draft.to,
      cc: [],
      subject: draft.subject,
      text: draft.text,
      inReplyTo: null,
      source: 'cron',
      chatId: null,
      status: 'pending',
      error: null,
      createdAt: new Date(),
      sentAt: null,
    });
    return _id.toHexString();
  } finally {
    await client.close();
  }
}

test.describe('Accounts', () => {
  test('an email account: a wrong password is refused with the reason and nothing stored, the right one is listed masked, renamed, removed', async ({
    page,
    mail,
  }) => {
    await ownerSession(page);
    await page.goto('/chat');
    await page.getByTestId('nav-accounts').click();
    await expect(page).toHaveURL(/\/accounts$/);
    await expect(page).toHaveTitle('Accounts · MetatronOS');
    await expect(page.getByTestId('no-accounts')).toBeVisible();

    await page.getByTestId('add-account').click();
    await fillGreenMail(page, mail, 'wrong-password');
    await page.getByTestId('save-account').click();
    const error = page.getByTestId('account-form-error');
    await expect(error).toBeVisible({ timeout: 20_000 });
    await expect(error).not.toHaveText('');
    // Nothing stored, nothing typed lost.
    await expect(page.getByTestId('account-item')).toHaveCount(0);
    expect(await (await page.request.get('/api/accounts')).json()).toEqual([]);
    await expect(page.getByTestId('account-name-input')).toHaveValue('Ann');
    await expect(page.getByTestId('imap-port')).toHaveValue(
      String(mail.imapPort),
    );

    await page.getByTestId('imap-password').fill(PASSWORD);
    await page.getByTestId('save-account').click();
    await expect(page.getByTestId('account-form')).toHaveCount(0, {
      timeout: 20_000,
    });
    const item = page.getByTestId('account-item');
    await expect(item).toHaveCount(1);
    await expect(item.getByTestId('account-name')).toHaveText('Ann');
    await expect(item.getByTestId('account-address')).toHaveText(
      mail.users[0].address,
    );
    await expect(item.getByTestId('account-target')).toHaveText([
      `${mail.host}:${mail.imapPort}`,
      `${mail.host}:${mail.smtpPort}`,
    ]);
    await expect(item.getByTestId('account-plain')).toHaveCount(2);
    await expect(item.getByTestId('account-password')).toHaveText([MASK, MASK]);
    await expect(page.getByText(PASSWORD)).toHaveCount(0);

    await item.getByTestId('test-account').click();
    await expect(item.getByTestId('account-test-passed')).toBeVisible({
      timeout: 20_000,
    });

    // Rename: the password fields stay empty and keep the stored one.
    await item.getByTestId('edit-account').click();
    await expect(page.getByTestId('imap-password')).toHaveValue('');
    await page.getByTestId('account-name-input').fill("Ann's mail");
    await page.getByTestId('save-account').click();
    await expect(item.getByTestId('account-name')).toHaveText("Ann's mail", {
      timeout: 20_000,
    });
    await expect(item.getByTestId('edit-account')).toBeFocused();
    await item.getByTestId('test-account').click();
    await expect(item.getByTestId('account-test-passed')).toBeVisible({
      timeout: 20_000,
    });

    await item.getByTestId('remove-account').click();
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('remove-account-confirm')).toHaveCount(0);
    await expect(item.getByTestId('remove-account')).toBeFocused();
    await item.getByTestId('remove-account').click();
    await page.getByTestId('confirm-remove-account').click();
    await expect(page.getByTestId('no-accounts')).toBeVisible();
    expect(await (await page.request.get('/api/accounts')).json()).toEqual([]);
  });

  test('a draft the AI wrote waits with a badge on Accounts, is edited and sent; another is discarded', async ({
    page,
    mail,
    app,
  }) => {
    await ownerSession(page);
    const created = await page.request.post('/api/accounts', {
      data: {
        kind: 'email',
        name: 'Ann',
        address: mail.users[0].address,
        imap: {
          host: mail.host,
          port: mail.imapPort,
          secure: false,
          user: LOGIN,
          password: PASSWORD,
        },
        smtp: {
          host: mail.host,
          port: mail.smtpPort,
          secure: false,
          user: LOGIN,
          password: PASSWORD,
        },
      },
    });
    expect(created.status()).toBe(201);
    const account = (await created.json()) as { id: string; address: string };
    const draft = {
      accountId: account.id,
      accountAddress: account.address,
      to: [mail.users[0].address],
      text: 'Good morning,\nhere is the weekly report.',
    };
    const weeklyId = await seedDraft(app, {
      ...draft,
      subject: 'Weekly report',
    });
    const otherId = await seedDraft(app, { ...draft, subject: 'Not this one' });

    await page.goto('/chat');
    await expect(page.getByTestId('nav-accounts-badge')).toContainText('2');
    await page.getByTestId('nav-accounts').click();
    const card = page.getByTestId('drafts-card');
    await expect(card).toContainText('Emails waiting for you (2)');
    const weekly = card.locator(`[data-draft-id="${weeklyId}"]`);
    await expect(weekly.getByTestId('draft-from')).toHaveText(account.address);
    await expect(weekly.getByTestId('draft-source')).toHaveText(
      'Email by Scheduled job',
    );

    await weekly.getByTestId('edit-draft').click();
    await weekly.getByTestId('draft-subject-input').fill('Weekly report (v2)');
    await weekly.getByTestId('save-draft').click();
    await expect(weekly.getByTestId('draft-subject')).toHaveText(
      'Weekly report (v2)',
    );

    await weekly.getByTestId('send-draft').click();
    await expect(weekly).toHaveCount(0, { timeout: 20_000 });
    await expect(page.getByTestId('nav-accounts-badge')).toContainText('1');

    const other = card.locator(`[data-draft-id="${otherId}"]`);
    await expect(other.getByTestId('draft-subject')).toHaveText('Not this one');
    await other.getByTestId('discard-draft').click();
    await page.getByTestId('confirm-discard-draft').click();
    await expect(page.getByTestId('drafts-card')).toHaveCount(0);
    await expect(page.getByTestId('nav-accounts-badge')).toHaveCount(0);
  });
});

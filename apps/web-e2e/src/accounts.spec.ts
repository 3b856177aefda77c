import type { Page } from '@playwright/test';
import {
  startGreenMail,
  type GreenMailServer,
} from '../../../tools/mail-servers/mail-servers';
import { expect, ownerSession, test as withFakeLlm } from './support/fake-llm';

const LOGIN = 'ann';
const PASSWORD = 'right-password';
/** What the console shows for every stored password (PASSWORD_MASK). */
const MASK = '••••••••';

/** A GreenMail (IMAP + SMTP, plain, loopback) beside the worker's MetatronOS and fake model provider. */
const test = withFakeLlm.extend<object, { mail: GreenMailServer }>({
  mail: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const mail = await startGreenMail([{ login: LOGIN, password: PASSWORD }]);
      await use(mail);
      await mail.stop();
    },
    { scope: 'worker', timeout: 60_000 },
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
    await expect(error).toContainText(
      `IMAP login failed for 'ann' at ${mail.host}:${mail.imapPort}: wrong user name or password`,
      { timeout: 20_000 },
    );
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
    // Escape is the confirmation's own key: pressed once it has the focus (its Cancel button).
    await expect(page.getByTestId('cancel-remove-account')).toBeFocused();
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('remove-account-confirm')).toHaveCount(0);
    await expect(item.getByTestId('remove-account')).toBeFocused();
    await item.getByTestId('remove-account').click();
    await page.getByTestId('confirm-remove-account').click();
    await expect(page.getByTestId('no-accounts')).toBeVisible();
    expect(await (await page.request.get('/api/accounts')).json()).toEqual([]);
  });

  test('emails a job wrote wait as drafts with a badge on Accounts; one is edited and sent, the other discarded', async ({
    page,
    mail,
    fake,
  }) => {
    await ownerSession(page);
    await page.request.patch('/api/settings', {
      data: {
        openaiApiKey: 'sk-e2e-openai-key-7890',
        primaryModel: 'gpt-4.1-mini',
      },
    });
    const server = (port: number) => ({
      host: mail.host,
      port,
      secure: false,
      user: LOGIN,
      password: PASSWORD,
    });
    const created = await page.request.post('/api/accounts', {
      data: {
        kind: 'email',
        name: 'Ann',
        address: mail.users[0].address,
        imap: server(mail.imapPort),
        smtp: server(mail.smtpPort),
      },
    });
    expect(created.status()).toBe(201);
    const account = (await created.json()) as { id: string; address: string };

    // A job in the email mode runs twice; each time the model sends an email, which an unattended run keeps as a draft.
    const job = await page.request.post('/api/cronjobs', {
      data: {
        name: 'Weekly report',
        instruction: 'Email the weekly report to me.',
        cronExpression: '0 8 * * 1',
        mode: 'email',
        enabled: false,
      },
    });
    expect(job.status()).toBe(201);
    const jobId = ((await job.json()) as { id: string }).id;
    for (const subject of ['Weekly report', 'Not this one']) {
      fake.openai.enqueue(
        {
          toolCalls: [
            {
              id: `call_${subject.length}`,
              name: 'email_actions',
              arguments: {
                action: 'send',
                to: [mail.users[0].address],
                subject,
                text: 'Good morning,\nhere is the weekly report.',
              },
            },
          ],
        },
        { text: ['Drafted it for you.'] },
      );
      expect(
        (await page.request.post(`/api/cronjobs/${jobId}/run`)).status(),
      ).toBe(202);
      await expect
        .poll(
          async () =>
            (
              (await (
                await page.request.get(`/api/cronjobs/${jobId}`)
              ).json()) as {
                running: boolean;
              }
            ).running,
          { timeout: 20_000 },
        )
        .toBe(false);
    }
    const drafts = (await (
      await page.request.get('/api/drafts?status=pending')
    ).json()) as { id: string; subject: string }[];
    const weeklyId = drafts.find((d) => d.subject === 'Weekly report')?.id;
    const otherId = drafts.find((d) => d.subject === 'Not this one')?.id;
    expect(weeklyId && otherId).toBeTruthy();

    await page.goto('/chat');
    await expect(page.getByTestId('nav-accounts-badge')).toContainText('2');
    await page.getByTestId('nav-accounts').click();
    const card = page.getByTestId('drafts-card');
    await expect(card).toContainText('Emails waiting for you (2)');
    const weekly = card.locator(`[data-draft-id="${weeklyId}"]`);
    await expect(weekly.getByTestId('draft-from')).toHaveText(account.address);
    await expect(weekly.getByTestId('draft-source')).toHaveText(
      'Email by job “Weekly report”',
    );

    await weekly.getByTestId('edit-draft').click();
    await weekly.getByTestId('draft-subject-input').fill('Weekly report (v2)');
    await weekly.getByTestId('save-draft').click();
    await expect(weekly.getByTestId('draft-subject')).toHaveText(
      'Weekly report (v2)',
    );

    await weekly.getByTestId('send-draft').click();
    await expect(weekly).toHaveCount(0, { timeout: 20_000 });
    const sent = (await (
      await page.request.get('/api/drafts?status=sent')
    ).json()) as { id: string; subject: string }[];
    expect(sent).toEqual([
      expect.objectContaining({ id: weeklyId, subject: 'Weekly report (v2)' }),
    ]);
    await expect(page.getByTestId('nav-accounts-badge')).toContainText('1');

    const other = card.locator(`[data-draft-id="${otherId}"]`);
    await expect(other.getByTestId('draft-subject')).toHaveText('Not this one');
    await other.getByTestId('discard-draft').click();
    await page.getByTestId('confirm-discard-draft').click();
    await expect(page.getByTestId('drafts-card')).toHaveCount(0);
    await expect(page.getByTestId('nav-accounts-badge')).toHaveCount(0);
  });
});

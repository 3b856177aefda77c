import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type RunningApp } from './support/app-server';
import { expect, ownerSession, test as base } from './support/fixtures';

/** The fake Baileys socket the server loads instead of Baileys (WHATSAPP_SOCKET_MODULE). */
const FAKE_SOCKET_MODULE = join(__dirname, 'support/fake-whatsapp-socket.cjs');
const PHONE = '14155550123';
const PERMISSION_EXISTS = 'Permission already exists for this phone number';

/**
 * A MetatronOS of its own whose WhatsApp socket is the fake: it shows a QR at once and
 * "is scanned" when the test writes a phone number to `scanFile`.
 */
const test = base.extend<object, { scanFile: string; app: RunningApp }>({
  scanFile: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const dir = mkdtempSync(join(tmpdir(), 'metatron-e2e-whatsapp-'));
      await use(join(dir, 'scan'));
      rmSync(dir, { recursive: true, force: true });
    },
    { scope: 'worker' },
  ],
  app: [
    async ({ scanFile }, use) => {
      const app = await startApp({
        env: {
          WHATSAPP_SOCKET_MODULE: FAKE_SOCKET_MODULE,
          FAKE_WHATSAPP_SCAN_FILE: scanFile,
        },
      });
      await use(app);
      await app.stop();
    },
    { scope: 'worker' },
  ],
});

test.use({ appName: 'whatsapp' });

test.describe('WhatsApp', () => {
  test('link flow: the QR shows right after Link device, the scan connects, disconnect clears the session', async ({
    page,
    app,
    scanFile,
  }) => {
    expect(app.output()).toContain('A custom WhatsApp socket module is in use');
    await ownerSession(page);
    await page.goto('/channels');
    const card = page.getByTestId('whatsapp-card');
    const state = card.getByTestId('whatsapp-state');
    await expect(state).toHaveText('Disconnected');
    const link = card.getByTestId('whatsapp-link');
    await expect(link).toBeEnabled();

    // How fast the QR shows is a figure of `npm run bench` (tools/bench/whatsapp-qr.bench.mjs), not a test.
    await link.click();

    const qr = card.getByTestId('whatsapp-qr');
    await expect(qr).toHaveAttribute('src', /^data:image\/png;base64,/);
    await expect(state).toHaveText('Scan the QR code');
    await expect(card.getByTestId('whatsapp-link')).toHaveCount(0);

    // The phone scans the code.
    writeFileSync(scanFile, PHONE);
    await expect(state).toHaveText(`Connected as +${PHONE}`);
    await expect(state).toHaveAttribute('data-status', 'connected');
    await expect(card.getByTestId('whatsapp-linking')).toHaveCount(0);
    const creds = join(app.dataDir, 'whatsapp-auth', 'creds.json');
    expect(existsSync(creds)).toBe(true);
    expect(
      await (await page.request.get('/api/whatsapp/status')).json(),
    ).toMatchObject({ status: 'connected', phoneNumber: PHONE });

    // Still connected after a reload (the status comes from the server).
    await page.reload();
    await expect(state).toHaveText(`Connected as +${PHONE}`);

    // Disconnect, clearing the saved session.
    await card.getByTestId('whatsapp-disconnect').click();
    const confirm = card.getByTestId('whatsapp-disconnect-confirm');
    await expect(confirm).toBeVisible();
    await expect(card.getByTestId('whatsapp-disconnect-cancel')).toBeFocused();
    const clearSession = card
      .getByTestId('whatsapp-clear-session')
      .getByRole('checkbox');
    await expect(clearSession).not.toBeChecked();
    await clearSession.check();
    await card.getByTestId('whatsapp-disconnect-confirm-button').click();
    await expect(state).toHaveText('Disconnected');
    await expect(confirm).toHaveCount(0);
    await expect(
      page.getByText('WhatsApp disconnected and the saved session cleared.'),
    ).toBeVisible();
    await expect(card.getByTestId('whatsapp-link')).toBeEnabled();
    expect(existsSync(creds)).toBe(false);
    expect(
      await (await page.request.get('/api/whatsapp/status')).json(),
    ).toMatchObject({ status: 'disconnected', phoneNumber: null });
  });

  test('permissions dialog: add a contact, switch read/reply/trusted, refuse a duplicate, remove it', async ({
    page,
  }) => {
    await ownerSession(page);
    await page.goto('/channels');
    await page.getByTestId('whatsapp-permissions').click();
    const dialog = page.getByRole('dialog', { name: 'WhatsApp permissions' });
    await expect(dialog).toBeVisible();
    await expect(dialog.getByTestId('no-permissions')).toBeVisible();

    await dialog.getByTestId('permission-phone-input').fill('+1 415 555 1234');
    await dialog.getByTestId('permission-name-input').fill('Mom');
    await dialog.getByTestId('add-permission').click();
    const item = dialog.getByTestId('permission-item');
    await expect(item).toHaveCount(1);
    await expect(item.getByTestId('permission-name')).toHaveText('Mom');
    await expect(item.getByTestId('permission-phone')).toHaveText(
      '+14155551234',
    );
    await expect(dialog.getByTestId('permission-phone-input')).toHaveValue('');
    await expect(dialog.getByTestId('permission-name-input')).toHaveValue('');

    const read = item.getByRole('switch', { name: 'Read, Mom' });
    const reply = item.getByRole('switch', { name: 'Reply, Mom' });
    const trusted = item.getByRole('switch', { name: 'Trusted, Mom' });
    // A new contact starts as Telegram's Allow does: Read and Reply on, not trusted.
    await expect(read).toBeChecked();
    await expect(reply).toBeChecked();
    await expect(trusted).not.toBeChecked();
    for (const toggle of [read, reply]) {
      await toggle.click();
      await expect(toggle).not.toBeChecked();
      await expect(toggle).toBeEnabled();
    }
    for (const toggle of [read, reply, trusted]) {
      await toggle.click();
      await expect(toggle).toBeChecked();
      await expect(toggle).toBeEnabled();
    }
    const listed = async () =>
      (await page.request.get('/api/whatsapp/permissions')).json();
    await expect.poll(listed).toEqual([
      expect.objectContaining({
        phoneNumber: '14155551234',
        displayName: 'Mom',
        canRead: true,
        canReply: true,
        trusted: true,
      }),
    ]);

    await trusted.click();
    await expect(trusted).not.toBeChecked();
    await expect(trusted).toBeEnabled();
    await expect.poll(listed).toEqual([
      expect.objectContaining({
        canRead: true,
        canReply: true,
        trusted: false,
      }),
    ]);

    // After a reload the dialog shows what the server kept.
    await page.reload();
    await page.getByTestId('whatsapp-permissions').click();
    await expect(dialog.getByTestId('permission-item')).toHaveCount(1);
    await expect(read).toBeChecked();
    await expect(reply).toBeChecked();
    await expect(trusted).not.toBeChecked();

    // The same number again, written differently: 409.
    await dialog.getByTestId('permission-phone-input').fill('14155551234');
    await dialog.getByTestId('permission-name-input').fill('Mother');
    await dialog.getByTestId('add-permission').click();
    await expect(dialog.getByTestId('permission-add-error')).toHaveText(
      PERMISSION_EXISTS,
    );
    await expect(dialog.getByTestId('permission-item')).toHaveCount(1);

    // Remove, with its confirmation (cancel once first).
    await item.getByTestId('delete-permission').click();
    const confirm = item.getByTestId('delete-permission-confirm');
    await expect(confirm).toContainText('Remove Mom?');
    await expect(item.getByTestId('cancel-delete-permission')).toBeFocused();
    await item.getByTestId('cancel-delete-permission').click();
    await expect(confirm).toHaveCount(0);
    await item.getByTestId('delete-permission').click();
    await item.getByTestId('confirm-delete-permission').click();
    await expect(dialog.getByTestId('no-permissions')).toBeVisible();
    await expect.poll(listed).toEqual([]);

    // The refused contact is still typed in the form: closing asks before dropping it.
    const asked: string[] = [];
    page.once('dialog', (question) => {
      asked.push(question.message());
      void question.accept();
    });
    await dialog.getByTestId('close-permissions').click();
    await expect(dialog).toHaveCount(0);
    expect(asked).toEqual([
      'You have unsaved changes. Leave without saving them?',
    ]);
  });
});

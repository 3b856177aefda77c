import { gunzipSync } from 'node:zlib';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { WORKSPACE_ROOT } from './support/app-server';
import { expect, ownerSession, test } from './support/fake-llm';

test.use({ appName: 'usage-backup' });
test.describe.configure({ mode: 'serial' });

const SHOTS = join(WORKSPACE_ROOT, 'dist', 'screenshots', 'usage-backup');

async function shots(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    // The chart draws again in the new scheme's colours.
    await page.waitForTimeout(200);
    await page.screenshot({
      path: join(SHOTS, `${name}-${scheme}.png`),
      fullPage: true,
    });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Sends one chat message through the API and waits for the whole reply. */
async function reply(page: Page, content: string): Promise<void> {
  const chat = await (
    await page.request.post('/api/chats', { data: { title: content } })
  ).json();
  const res = await page.request.post(`/api/chats/${chat.id}/messages`, {
    data: { content },
  });
  expect(res.status()).toBe(200);
  expect(await res.text()).toContain('event: done');
}

test.describe('Usage page and backups', () => {
  test('Usage: totals, chart, by model with an estimated cost, by source', async ({
    page,
    fake,
  }) => {
    await ownerSession(page);
    await page.request.patch('/api/settings', {
      data: {
        openaiApiKey: 'sk-e2e-openai-key-7890',
        geminiApiKey: 'AIza-e2e-gemini-key-1234',
        primaryModel: 'gpt-4.1-mini',
      },
    });
    fake.openai.enqueue({
      text: ['Hello!'],
      usage: { promptTokens: 1_000_000, completionTokens: 500_000 },
    });
    await reply(page, 'hi');
    // A model without a known price.
    await page.request.patch('/api/settings', {
      data: { primaryModel: 'gemini-1.0-ultra-custom' },
    });
    fake.gemini.enqueue({
      text: ['Hi there'],
      usage: { promptTokens: 2000, completionTokens: 100 },
    });
    await reply(page, 'hello');

    await page.goto('/');
    await page.getByTestId('nav-usage').click();
    await expect(page).toHaveURL(/\/usage$/);
    await expect(page.getByTestId('usage-input')).toHaveText('1,002,000');
    await expect(page.getByTestId('usage-output')).toHaveText('500,100');
    await expect(page.getByTestId('usage-turns')).toHaveText('2');
    // gpt-4.1-mini at $0.40 / $1.60 per million tokens; the Gemini model has no known price.
    await expect(page.getByTestId('usage-cost')).toContainText('$1.20');
    await expect(page.getByTestId('usage-cost')).toContainText(/estimate/i);
    await expect(page.getByTestId('usage-cost-unknown')).toContainText(
      '1 model without a known price not counted',
    );
    const byModel = page.getByTestId('usage-by-model');
    await expect(byModel.locator('tbody tr')).toHaveCount(2);
    await expect(byModel.locator('tbody tr').first()).toContainText(
      'gpt-4.1-mini',
    );
    await expect(byModel.locator('tbody tr').nth(1)).toContainText('unknown');
    await expect(page.getByTestId('usage-by-source')).toContainText('Chats');
    await expect(page.getByTestId('usage-chart')).toHaveAttribute(
      'aria-label',
      /Busiest day: .* with 1,502,100 tokens/,
    );
    await shots(page, 'usage-desktop');

    await page.getByTestId('usage-range-7').click();
    await expect(page.getByTestId('usage-turns')).toHaveText('2');

    await page.setViewportSize({ width: 390, height: 844 });
    await expect(page.getByTestId('usage-chart')).toBeVisible();
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth > window.innerWidth + 1,
    );
    expect(overflow).toBe(false);
    await shots(page, 'usage-phone');
  });

  test('Settings: Backup downloads an archive, Restore asks, uploads and reports', async ({
    page,
  }, testInfo) => {
    await ownerSession(page);
    await page.goto('/settings');
    const card = page.getByTestId('backup-card');
    await expect(card).toContainText(
      'Secrets not included; give a passphrase to include them',
    );

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('backup-download').click(),
    ]);
    expect(download.suggestedFilename()).toMatch(
      /^metatronos-backup-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}\.tar\.gz$/,
    );
    const archive = testInfo.outputPath('backup.tar.gz');
    await download.saveAs(archive);
    const bytes = readFileSync(archive);
    expect(bytes.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));

    // With a passphrase the secrets are sealed into the archive (a POST, saved by the browser).
    await page.getByTestId('backup-passphrase').fill('correct horse battery');
    await expect(page.getByTestId('backup-keys-warning')).toContainText(
      'encrypted with this passphrase',
    );
    const [sealedDownload] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('backup-download').click(),
    ]);
    expect(sealedDownload.suggestedFilename()).toMatch(
      /^metatronos-backup-.*\.tar\.gz$/,
    );
    const sealed = testInfo.outputPath('sealed.tar.gz');
    await sealedDownload.saveAs(sealed);
    expect(gunzipSync(readFileSync(sealed)).toString('latin1')).toContain(
      '"scheme": "scrypt-aes-256-gcm"',
    );

    // A file that is not a backup: refused, nothing changed.
    const junk = testInfo.outputPath('notes.txt');
    writeFileSync(junk, 'not a backup\n'.repeat(100));
    await page.getByTestId('backup-file').setInputFiles(junk);
    await expect(page.getByTestId('restore-confirm')).toContainText(
      'Restore notes.txt',
    );
    await page.getByTestId('restore-confirm-button').click();
    await expect(page.getByTestId('restore-error')).toContainText(
      'not a usable MetatronOS backup',
    );

    // Cancel sends nothing.
    await page.getByTestId('backup-file').setInputFiles(archive);
    await page.getByTestId('restore-cancel').click();
    await expect(page.getByTestId('restore-confirm')).toHaveCount(0);

    await page.getByTestId('backup-file').setInputFiles(sealed);
    await expect(page.getByTestId('restore-confirm')).toContainText(
      'is replaced by the backup',
    );
    await page.getByTestId('restore-passphrase').fill('correct horse battery');
    await card.scrollIntoViewIfNeeded();
    await shots(page, 'restore-confirm');
    await page.getByTestId('restore-confirm-button').click();
    // Every open console reloads after a restore, this one included, and says why.
    await expect(page.locator('mat-snack-bar-container')).toContainText(
      'A backup was restored: the console reloaded with its data.',
      { timeout: 15_000 },
    );
    // The passphrase opened the backup's sealed keys: the notice says they are in use.
    await expect(page.locator('mat-snack-bar-container')).toContainText(
      "The backup's API keys and tokens are in use.",
    );
    await shots(page, 'restore-result');
    // Still logged in, and the chats of the backup are there.
    await page.goto('/chat');
    const chats = await (await page.request.get('/api/chats')).json();
    expect(chats.map((c: { title: string }) => c.title).sort()).toEqual([
      'hello',
      'hi',
    ]);
    expect(existsSync(archive)).toBe(true);
  });
});

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WORKSPACE_ROOT } from './support/app-server';
import { expect, ownerSession, test } from './support/fixtures';

test.describe('Files page', () => {
  let state: string;

  test.beforeEach(async ({ app }) => {
    state = join(app.dataDir, 'files', 'state');
    mkdirSync(join(state, 'reports'), { recursive: true });
    writeFileSync(join(state, 'notes.md'), '# Notes\nBuy a new kettle.\n');
    writeFileSync(join(state, 'reports', 'q1.csv'), 'month,total\njan,3\n');
    writeFileSync(
      join(state, 'TODO.md'),
      '# TODO (open)\n\n- [ ] [Created](2026-02-09 10:00) | Call the plumber\n',
    );
    writeFileSync(
      join(state, 'TODO.DONE.md'),
      '- [x] [Created](2026-02-08 09:00), [Done](2026-02-09 11:00) | Renew the passport\n',
    );
  });

  test('browses both dirs, views and downloads a file, shows the TODO list', async ({
    page,
  }) => {
    await ownerSession(page);
    await page.goto('/');
    await page.getByTestId('nav-files').click();
    await expect(page).toHaveURL(/\/files$/);
    const entries = page.getByTestId('file-entry');
    await expect(entries).toHaveCount(2);
    await expect(entries.nth(0)).toContainText('file_cache_dir');
    await expect(entries.nth(1)).toContainText('file_state_dir');

    await expect(page.getByTestId('todo-open')).toContainText(
      'Call the plumber',
    );
    await expect(page.getByTestId('todo-done')).toContainText(
      'Renew the passport',
    );

    await page
      .getByRole('button', { name: 'Open folder file_state_dir' })
      .click();
    await expect(page).toHaveURL(/\/files\?path=file_state_dir$/);
    await expect(page.getByTestId('files-breadcrumbs')).toContainText(
      'Files/file_state_dir',
    );
    await expect(entries.first()).toHaveAttribute('data-name', 'reports');

    await page.getByRole('button', { name: 'View notes.md' }).click();
    await expect(page.getByTestId('viewer-text')).toHaveText(
      '# Notes\nBuy a new kettle.\n',
    );
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('viewer-download').click(),
    ]);
    expect(download.suggestedFilename()).toBe('notes.md');
    await page.getByTestId('viewer-close').click();
    await expect(page.getByTestId('file-viewer')).toHaveCount(0);

    await page.getByRole('button', { name: 'Open folder reports' }).click();
    await expect(page.getByTestId('files-breadcrumbs')).toContainText(
      'reports',
    );
    await page
      .getByTestId('files-breadcrumbs')
      .getByRole('link', { name: 'file_state_dir' })
      .click();
    await expect(page).toHaveURL(/\/files\?path=file_state_dir$/);
  });

  test('deletes only after the confirm dialog; Escape keeps the file', async ({
    page,
  }) => {
    await ownerSession(page);
    await page.goto('/files?path=file_state_dir%2Freports');
    const row = page.locator('[data-testid="file-entry"][data-name="q1.csv"]');
    await row.getByTestId('file-delete').click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText('file_state_dir/reports/q1.csv');
    await page.keyboard.press('Escape');
    await expect(dialog).toHaveCount(0);
    expect(existsSync(join(state, 'reports', 'q1.csv'))).toBe(true);

    await row.getByTestId('file-delete').click();
    await page.getByTestId('delete-file-cancel').click();
    await expect(dialog).toHaveCount(0);
    expect(existsSync(join(state, 'reports', 'q1.csv'))).toBe(true);

    await row.getByTestId('file-delete').click();
    await page.getByTestId('delete-file-confirm').click();
    await expect(page.getByTestId('files-empty')).toBeVisible();
    expect(existsSync(join(state, 'reports', 'q1.csv'))).toBe(false);
  });

  test('an unknown folder says so; a refused path too; a binary file is only downloaded', async ({
    page,
    app,
  }) => {
    await ownerSession(page);
    const cache = join(app.dataDir, 'files', 'cache');
    mkdirSync(cache, { recursive: true });
    writeFileSync(join(cache, 'photo.bin'), Buffer.from([0, 1, 2, 3]));
    await page.goto('/files?path=file_cache_dir');
    await page.getByRole('button', { name: 'View photo.bin' }).click();
    await expect(page.getByTestId('viewer-error')).toContainText(
      'file_cache_dir/photo.bin is not a text file; download it instead',
    );

    await page.goto('/files?path=file_state_dir%2Fnope');
    await expect(page.getByTestId('files-missing')).toContainText(
      'No such file or directory',
    );
    await page.goto('/files?path=file_state_dir%2F..%2F..');
    await expect(page.getByTestId('files-missing')).toBeVisible();
  });

  for (const scheme of ['light', 'dark'] as const)
    test(`fits a phone screen (${scheme})`, async ({ page }) => {
      await ownerSession(page);
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto('/files?path=file_state_dir');
      await page.getByRole('button', { name: 'View notes.md' }).click();
      await expect(page.getByTestId('viewer-text')).toBeVisible();
      await expect(page.getByTestId('todo-open')).toContainText(
        'Call the plumber',
      );
      const overflow = await page.evaluate(
        () =>
          document.documentElement.scrollWidth >
          document.documentElement.clientWidth,
      );
      expect(overflow).toBe(false);
      await page.screenshot({
        path: join(WORKSPACE_ROOT, 'dist', `files-phone-${scheme}.png`),
        fullPage: true,
      });
    });
});

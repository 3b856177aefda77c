// A restore killed with SIGKILL at every step must leave, at the next start, either the previous data
// whole (the upload kept in DATA_DIR/backup-interrupted) or the new data whole: never a mix, never an
// app that cannot start. The kill points come from the test-only METATRON_TEST_RESTORE_PAUSE_AT hook
// (apps/api/src/backup/restore-test-pause.ts): the restore stops there and prints `restore paused at <step>`.
// Run by `nx run api:test-process` (builds the API and the database launcher first).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ownerSession, startServer, tempDir } from './support/built-server.mjs';

const PASSWORD = 'process test password';

const start = (dataDir, env = {}) => startServer(dataDir, env, 30000);

async function stop(proc) {
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 10000);
  await proc.exit;
  clearTimeout(timer);
}

const session = (url) => ownerSession(url, PASSWORD);

async function api(proc, cookie, method, path, body) {
  const res = await fetch(`${proc.url}${path}`, {
    method,
    headers: {
      Cookie: cookie,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path} answered ${res.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

/** Makes chats, a timezone and an attached file on a running server. */
async function seed(proc, cookie, titles, timezone, fileText) {
  for (const title of titles)
    await api(proc, cookie, 'POST', '/api/chats', { title });
  await api(proc, cookie, 'PATCH', '/api/settings', { timezone });
  const form = new FormData();
  form.append('file', new Blob([fileText]), 'note.txt');
  const res = await fetch(`${proc.url}/api/attachments`, {
    method: 'POST',
    headers: { Cookie: cookie },
    body: form,
  });
  assert.equal(res.status, 201);
  return (await res.json()).id;
}

/** What the owner sees: chat titles, the timezone, and whether each attachment can be read. */
async function state(proc, cookie, attachmentIds) {
  const chats = await api(proc, cookie, 'GET', '/api/chats');
  const settings = await api(proc, cookie, 'GET', '/api/settings');
  const files = {};
  for (const id of attachmentIds) {
    const res = await fetch(`${proc.url}/api/attachments/${id}`, {
      headers: { Cookie: cookie },
    });
    files[id] = res.ok ? await res.text() : res.status;
  }
  return {
    titles: chats.map((c) => c.title).sort(),
    timezone: settings.timezone,
    files,
  };
}

function waitFor(proc, text, ms = 60000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "${text}" in time: ${proc.out.stderr}`)),
      ms,
    );
    const check = () => {
      if (proc.out.stderr.includes(text)) {
        clearTimeout(timer);
        proc.child.stderr.off('data', check);
        resolve();
      }
    };
    proc.child.stderr.on('data', check);
    check();
  });
}

describe('a restore killed at any step', async () => {
  // The backup to restore: another instance's chats, timezone and file.
  const source = await start(tempDir('metatron-restore-src-'));
  const sourceCookie = await session(source.url);
  const newFile = await seed(
    source,
    sourceCookie,
    ['New A', 'New B'],
    'Europe/Berlin',
    'new file',
  );
  const archive = Buffer.from(
    await (
      await fetch(`${source.url}/api/backup`, {
        headers: { Cookie: sourceCookie },
      })
    ).arrayBuffer(),
  );
  await stop(source);

  const cases = [
    ['staging', 'previous'],
    ['staged', 'previous'],
    ['committed', 'new'],
    ['switching', 'new'],
    ['files', 'new'],
    ['cleanup', 'new'],
  ];
  for (const [step, expected] of cases) {
    it(`at "${step}": the next start has the ${expected} data whole`, async () => {
      const dataDir = tempDir('metatron-restore-crash-');
      const first = await start(dataDir, {
        METATRON_TEST_RESTORE_PAUSE_AT: step,
      });
      const cookie = await session(first.url);
      const oldFile = await seed(
        first,
        cookie,
        ['Old'],
        'Asia/Tokyo',
        'old file',
      );
      const previous = await state(first, cookie, [oldFile, newFile]);
      const upload = fetch(`${first.url}/api/backup/restore?replace=true`, {
        method: 'POST',
        headers: { Cookie: cookie, 'content-type': 'application/gzip' },
        body: archive,
      }).catch(() => null);
      await waitFor(first, `restore paused at ${step}`);
      first.child.kill('SIGKILL');
      await first.exit;
      await upload;

      const second = await start(dataDir);
      try {
        const cookie2 = await session(second.url);
        const now = await state(second, cookie2, [oldFile, newFile]);
        if (expected === 'previous') {
          assert.deepEqual(now, previous);
          const kept = readdirSync(join(dataDir, 'backup-interrupted'));
          assert.equal(kept.length, 1);
          assert.ok(
            readFileSync(join(dataDir, 'backup-interrupted', kept[0])).equals(
              archive,
            ),
            'the uploaded archive is kept as it was sent',
          );
        } else {
          assert.deepEqual(now, {
            titles: ['New A', 'New B'],
            timezone: 'Europe/Berlin',
            files: { [oldFile]: 404, [newFile]: 'new file' },
          });
        }
        assert.equal(
          existsSync(join(dataDir, 'backup-restore.journal.json')),
          false,
          'the journal is gone once the start has finished or rolled back',
        );
        // A later restore works as usual.
        const again = await fetch(
          `${second.url}/api/backup/restore?replace=true`,
          {
            method: 'POST',
            headers: { Cookie: cookie2, 'content-type': 'application/gzip' },
            body: archive,
          },
        );
        assert.equal(again.status, 200, await again.text());
      } finally {
        await stop(second);
      }
    });
  }
});

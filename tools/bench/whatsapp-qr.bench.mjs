// WhatsApp linking figure (issue 5): the built app (API + console on one port, embedded database) with the
// fake Baileys socket (apps/web-e2e/src/support/fake-whatsapp-socket.cjs, loaded via WHATSAPP_SOCKET_MODULE),
// which emits a QR code as soon as the socket exists. In Debian's Chromium: from the click on "Link device"
// until the QR image is decoded and on screen, 5 runs (disconnect in between). Goal ≤ 1 s; a miss exits 1.
// BENCH_SMOKE=1: one run, no goal (part of `npm test`).
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { freePort } from './free-port.mjs';

const root = process.cwd();
const SMOKE = process.env.BENCH_SMOKE === '1';
const RUNS = SMOKE ? 1 : 5;
const PASSWORD = 'bench owner password';

const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
try {
  accessSync(executablePath, constants.X_OK);
} catch {
  console.log(
    `WhatsApp QR bench did not run: no Chromium at ${executablePath} ` +
      "(install Debian's chromium package, e.g. `sudo apt-get install chromium`, or set CHROMIUM_PATH).",
  );
  process.exit(3);
}
// The browser first: if it cannot start, no server is left running.
const browser = await chromium.launch({
  executablePath,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
  ],
});
const dataDir = mkdtempSync(join(tmpdir(), 'metatron-bench-qr-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const server = spawn(process.execPath, ['dist/apps/api/main.js'], {
  cwd: root,
  env: {
    ...process.env,
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    WHATSAPP_SOCKET_MODULE: join(
      root,
      'apps/web-e2e/src/support/fake-whatsapp-socket.cjs',
    ),
  },
  stdio: 'ignore',
});
let exited = false;
server.once('exit', () => (exited = true));
try {
  for (let ready = false; !ready; ) {
    if (exited) throw new Error('the API exited while starting');
    ready = await fetch(`${base}/api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (!ready) await new Promise((done) => setTimeout(done, 20));
  }
  const context = await browser.newContext({ baseURL: base });
  const setup = await context.request.post('/api/auth/setup', {
    data: { password: PASSWORD },
  });
  if (setup.status() !== 201)
    throw new Error(`setup answered ${setup.status()}`);
  const page = await context.newPage();
  const times = [];
  for (let run = 0; run < RUNS; run++) {
    // The WhatsApp card lives on the Channels page.
    await page.goto('/channels');
    const link = page.getByTestId('whatsapp-link');
    await link.waitFor({ state: 'visible' });
    await page.waitForFunction(
      () =>
        !document
          .querySelector('[data-testid="whatsapp-link"]')
          ?.hasAttribute('disabled'),
    );
    await page.evaluate(() => {
      document.addEventListener(
        'click',
        () => (window.linkClickedAt ??= performance.now()),
        { capture: true, once: true },
      );
    });
    await link.click();
    const elapsed = await page.waitForFunction(
      () => {
        const img = document.querySelector('[data-testid="whatsapp-qr"]');
        const shown =
          window.linkClickedAt !== undefined &&
          !!img &&
          img.complete &&
          img.naturalWidth > 0 &&
          img.getBoundingClientRect().width > 0;
        return shown ? performance.now() - window.linkClickedAt : false;
      },
      undefined,
      { polling: 'raf', timeout: 10_000 },
    );
    times.push(Math.round(await elapsed.jsonValue()));
    const off = await context.request.post('/api/whatsapp/disconnect', {
      data: { clearSession: true },
    });
    if (!off.ok()) throw new Error(`disconnect answered ${off.status()}`);
  }
  const sorted = [...times].sort((a, b) => a - b);
  console.log(
    `WhatsApp QR on screen after clicking Link device (Chromium, fake socket), ${RUNS} runs: ${times.join(', ')} ms; ` +
      `median ${sorted[Math.floor(RUNS / 2)]} ms, max ${sorted.at(-1)} ms (goal ≤ 1000 ms: ${SMOKE ? 'not checked in a smoke run' : sorted.at(-1) <= 1000 ? 'met' : 'NOT met'})`,
  );
  if (!SMOKE && sorted.at(-1) > 1000) process.exitCode = 1;
} finally {
  await browser.close();
  server.kill('SIGTERM');
  await new Promise((done) => server.once('exit', done));
  rmSync(dataDir, { recursive: true, force: true });
}

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Real mail (GreenMail: SMTP + IMAP) and calendar (Radicale: CalDAV) servers for
 * tests, each on free loopback ports with users of the test's choosing. Installed by
 * tools/mail-servers/install.sh (npm test runs it); missing pieces fail the test with
 * the command that installs them, never a silent skip.
 */

export const GREENMAIL_VERSION = '2.1.3';
export const RADICALE_VERSION = '3.9.0';

const CACHE = resolve(__dirname, '.cache');
const INSTALL_HINT =
  'run `bash tools/mail-servers/install.sh` (npm test does it; it needs Java 17, Maven and Python 3)';

export interface MailUser {
  /** The login (also the local part GreenMail delivers to when no address is given). */
  login: string;
  password: string;
  /** The mailbox address; defaults to `<login>@example.test`. */
  address?: string;
}

export interface GreenMailServer {
  host: '127.0.0.1';
  smtpPort: number;
  imapPort: number;
  users: Required<MailUser>[];
  stop(): Promise<void>;
}

export interface RadicaleServer {
  /** The server's root URL, e.g. `http://127.0.0.1:5232/` (what an account's `url` holds). */
  url: string;
  users: MailUser[];
  stop(): Promise<void>;
}

export function greenMailJar(): string {
  const jar =
    process.env['GREENMAIL_JAR'] ??
    join(CACHE, `greenmail-standalone-${GREENMAIL_VERSION}.jar`);
  if (!existsSync(jar))
    throw new Error(`GreenMail is missing (${jar}): ${INSTALL_HINT}.`);
  return jar;
}

export function radicaleBinary(): string {
  const bin =
    process.env['RADICALE_BIN'] ??
    join(CACHE, `radicale-${RADICALE_VERSION}`, 'bin', 'radicale');
  if (!existsSync(bin))
    throw new Error(`Radicale is missing (${bin}): ${INSTALL_HINT}.`);
  return bin;
}

/** A port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

async function portOpen(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = new Socket();
    socket.setTimeout(500);
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
    socket.once('timeout', () => {
      socket.destroy();
      done(false);
    });
    socket.connect(port, '127.0.0.1');
  });
}

async function waitForPorts(
  child: ChildProcess,
  ports: number[],
  what: string,
  output: () => string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(
        `${what} exited with ${child.exitCode}: ${output().slice(-2000)}`,
      );
    const open = await Promise.all(ports.map(portOpen));
    if (open.every(Boolean)) return;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `${what} did not open ports ${ports.join(', ')} within ${timeoutMs} ms: ${output().slice(-2000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function stopper(
  child: ChildProcess,
  cleanup: () => void,
): () => Promise<void> {
  return async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    cleanup();
  };
}

/** Starts GreenMail with SMTP and IMAP (plain) on free loopback ports. Authentication is on: wrong passwords fail. */
export async function startGreenMail(
  users: MailUser[],
): Promise<GreenMailServer> {
  const jar = greenMailJar();
  const [smtpPort, imapPort, apiPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const full = users.map((u) => ({
    ...u,
    address: u.address ?? `${u.login}@example.test`,
  }));
  const args = [
    '-Xss512k',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-Dgreenmail.hostname=127.0.0.1',
    `-Dgreenmail.smtp.port=${smtpPort}`,
    `-Dgreenmail.imap.port=${imapPort}`,
    '-Dgreenmail.api.hostname=127.0.0.1',
    `-Dgreenmail.api.port=${apiPort}`,
    `-Dgreenmail.users=${full.map((u) => `${u.login}:${u.password}@${u.address.split('@')[1]}`).join(',')}`,
    '-jar',
    jar,
  ];
  const child = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d) => (output = (output + d).slice(-20_000)));
  child.stderr?.on('data', (d) => (output = (output + d).slice(-20_000)));
  await waitForPorts(child, [smtpPort, imapPort], 'GreenMail', () => output);
  return {
    host: '127.0.0.1',
    smtpPort,
    imapPort,
    users: full,
    stop: stopper(child, () => undefined),
  };
}

/** Starts Radicale (CalDAV) on a free loopback port, with plain htpasswd users and a fresh store. */
export async function startRadicale(
  users: MailUser[],
): Promise<RadicaleServer> {
  const bin = radicaleBinary();
  const dir = mkdtempSync(join(tmpdir(), 'metatron-radicale-'));
  const htpasswd = join(dir, 'users');
  writeFileSync(
    htpasswd,
    users.map((u) => `${u.login}:${u.password}`).join('\n') + '\n',
  );
  const port = await freePort();
  const child = spawn(
    bin,
    [
      '--server-hosts',
      `127.0.0.1:${port}`,
      '--storage-filesystem-folder',
      join(dir, 'collections'),
      '--auth-type',
      'htpasswd',
      '--auth-htpasswd-filename',
      htpasswd,
      '--auth-htpasswd-encryption',
      'plain',
      '--auth-delay',
      '0',
      '--logging-level',
      'warning',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (d) => (output = (output + d).slice(-20_000)));
  child.stderr?.on('data', (d) => (output = (output + d).slice(-20_000)));
  await waitForPorts(child, [port], 'Radicale', () => output);
  return {
    url: `http://127.0.0.1:${port}/`,
    users,
    stop: stopper(child, () => rmSync(dir, { recursive: true, force: true })),
  };
}

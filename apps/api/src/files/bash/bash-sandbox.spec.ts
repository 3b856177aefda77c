import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AiToolContext } from '../../ai-tools/ai-tool';
import { FileDirs } from '../file-dirs';
import { BASH_LIMITS, BashSandbox, type BashResult } from './bash-sandbox';
import { BashTool } from './bash.tool';
import { fixedSecrets } from '../../secrets/fixed-secrets';

const STORED_SECRET = 'sk-stored-Secret-0123456789';

/** These run the real bubblewrap (installed by `npm test` as root on Debian). */
describe('the bash sandbox (real bubblewrap)', () => {
  let dataDir: string;
  let dirs: FileDirs;
  let real: Record<'file_cache_dir' | 'file_state_dir', string>;
  let sandbox: BashSandbox;
  let tool: BashTool;
  const context = { signal: new AbortController().signal } as AiToolContext;

  beforeAll(async () => {
    // Not under /tmp (the sandbox has a private /tmp): where a real DATA_DIR lives.
    dataDir = mkdtempSync(join('/var/tmp', 'bash-sandbox-'));
    dirs = new FileDirs({ dataDir });
    real = dirs.ensure();
    sandbox = new BashSandbox({ bwrapPath: undefined }, dirs);
    tool = new BashTool(sandbox, dirs, fixedSecrets([STORED_SECRET]));
    mkdirSync(join(dataDir, 'db'));
    writeFileSync(join(dataDir, 'db', 'metatron.sqlite'), 'database bytes');
    writeFileSync(join(dataDir, 'secrets.json'), '{"openaiApiKey":"sk-x"}');
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const bash = async (
    cmd: string,
    extra: { cwd?: string; timeout_seconds?: number } = {},
  ): Promise<BashResult & { error?: string }> =>
    JSON.parse(await tool.execute({ cmd, ...extra }, context));

  /** Processes whose PID namespace is `ns` (`pid:[…]`), seen from the host. */
  const processesIn = (ns: string): number[] =>
    readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .filter((pid) => {
        try {
          return readlinkSync(`/proc/${pid}/ns/pid`) === ns;
        } catch {
          return false;
        }
      })
      .map(Number);

  /** The processes of `ns` still alive after waiting up to `ms` for the kernel to tear the namespace down. */
  const goneWithin = async (ns: string, ms: number): Promise<number[]> => {
    for (let waited = 0; waited < ms; waited += 50) {
      if (processesIn(ns).length === 0) return [];
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return processesIn(ns);
  };

  it('is available here (bwrap can build a sandbox)', async () => {
    expect(await sandbox.unavailableReason()).toBeNull();
    expect(await tool.isAvailable()).toBe(true);
  });

  it('returns the exit code and stdout and stderr together, in order', async () => {
    expect(await bash('echo out; echo err >&2; echo again; exit 3')).toEqual({
      exit_code: 3,
      output: 'out\nerr\nagain\n',
      truncated: false,
      timed_out: false,
    });
  });

  it('writes to both file dirs through their aliases, in cmd and cwd', async () => {
    const result = await bash(
      'mkdir -p file_state_dir/notes && echo kept > file_state_dir/notes/a.txt && echo temp > b.txt && pwd && echo $file_cache_dir',
      { cwd: 'file_state_dir' },
    );
    expect(result.exit_code).toBe(0);
    expect(result.output).toBe(
      `${real.file_state_dir}\n${real.file_cache_dir}\n`,
    );
    expect(readFileSync(join(real.file_state_dir, 'notes/a.txt'), 'utf8')).toBe(
      'kept\n',
    );
    expect(readFileSync(join(real.file_state_dir, 'b.txt'), 'utf8')).toBe(
      'temp\n',
    );
    expect((await bash('pwd')).output).toBe(`${real.file_cache_dir}\n`);
  });

  it.each([
    ['/etc'],
    ['file_cache_dir/../..'],
    ['../'],
    [tmpdir()],
    ['file_cache_dir/missing-dir'],
  ])('refuses the cwd %j without running anything', async (cwd) => {
    const result = await bash('touch ran-anyway', { cwd });
    expect(result.error).toMatch(/^cwd: /);
    expect(existsSync(join(real.file_cache_dir, 'ran-anyway'))).toBe(false);
  });

  it.each([
    ['cat', 'cat file_cache_dir/held.txt'],
    ['rev', 'rev file_cache_dir/held.txt'],
    ['base64 (wrapped)', 'base64 file_cache_dir/held.txt'],
    [
      'base64 -w0 after a prefix',
      '(printf ab; cat file_cache_dir/held.txt) | base64 -w0',
    ],
    ['hex (xxd -p)', 'xxd -p file_cache_dir/held.txt'],
    [
      'hex upper',
      'od -An -tx1 -v file_cache_dir/held.txt | tr -d " \\n" | tr a-f A-F',
    ],
  ])('never returns a stored secret a file holds: %s', async (_form, cmd) => {
    writeFileSync(
      join(real.file_cache_dir, 'held.txt'),
      `{"headers":{"authorization":"Bearer ${STORED_SECRET}"}}\n`,
    );
    const result = await bash(cmd);
    expect(result.exit_code).toBe(0);
    expect(result.output).toContain('[redacted secret]');
    for (const form of [
      STORED_SECRET,
      [...STORED_SECRET].reverse().join(''),
      Buffer.from(STORED_SECRET).toString('hex'),
    ])
      expect(result.output.replace(/\s/g, '').toLowerCase()).not.toContain(
        form.toLowerCase(),
      );
  });

  describe('escapes', () => {
    let server: Server;
    let port: number;
    let connections = 0;

    beforeAll(async () => {
      server = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((resolve) =>
        server.listen(0, '127.0.0.1', resolve),
      );
      port = (server.address() as { port: number }).port;
    });
    afterAll(
      () => new Promise<void>((resolve) => server.close(() => resolve())),
    );

    it('has no network: a loopback server of the host is unreachable', async () => {
      // Prove the server answers from the host first, so the refusals below mean something.
      const probe = spawnSync('bash', [
        '-c',
        `echo hi > /dev/tcp/127.0.0.1/${port}`,
      ]);
      expect(probe.status).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const before = connections;
      expect(before).toBeGreaterThan(0);

      const tcp = await bash(`echo hi > /dev/tcp/127.0.0.1/${port}`);
      expect(tcp.exit_code).not.toBe(0);
      expect(tcp.output).toMatch(/Connection refused|Network is unreachable/);
      const curl = await bash(
        `curl -sS --max-time 3 http://127.0.0.1:${port}/ || echo curl failed`,
      );
      expect(curl.output).toMatch(/curl failed/);
      const ip = await bash('cat /proc/net/dev | tail -n +3 | cut -d: -f1');
      expect(ip.output.trim()).toBe('lo');
      expect(connections).toBe(before);
    });

    it('sees nothing of DATA_DIR but the file dirs, nor the owner’s home or the repo', async () => {
      const listing = await bash(
        `ls -A ${dataDir}; ls -A ${dataDir}/files; cat ${dataDir}/db/metatron.sqlite ${dataDir}/secrets.json`,
      );
      expect(listing.output).toContain('files\ncache\nstate\n');
      expect(listing.output).toMatch(/No such file or directory/);
      expect(listing.output).not.toContain('database bytes');
      expect(listing.output).not.toContain('sk-x');

      const home = await bash(
        `ls -A ${homedir()} ${process.cwd()}; echo $HOME`,
      );
      expect(home.output).toContain(
        `ls: cannot access '${homedir()}': No such file or directory`,
      );
      expect(home.output).toContain(
        `ls: cannot access '${process.cwd()}': No such file or directory`,
      );
      expect(home.output.trim().split('\n').pop()).toBe('/tmp');
    });

    it('cannot write outside the file dirs; /tmp is private', async () => {
      const marker = `sandbox-marker-${process.pid}`;
      const result = await bash(
        [
          '/usr/x',
          '/etc/x',
          '/x',
          '/dev/x',
          `${dataDir}/x`,
          `${dataDir}/files/x`,
        ]
          .map((path) => `touch ${path} 2>/dev/null && echo wrote ${path}`)
          .join('; ') + `; echo private > /tmp/${marker} && echo tmp ok`,
      );
      expect(result.output).toBe('tmp ok\n');
      expect(existsSync(join(dataDir, 'x'))).toBe(false);
      expect(existsSync(join(dataDir, 'files', 'x'))).toBe(false);
      expect(existsSync(join(tmpdir(), marker))).toBe(false);
    });

    it('starts with an empty environment: no key of the app’s process', async () => {
      process.env['OPENAI_API_KEY'] = 'sk-test-env-secret-4242';
      process.env['METATRON_SECRET_TOKEN'] = 'token-env-secret-4242';
      try {
        const env = await bash('env');
        expect(env.output).not.toContain('env-secret-4242');
        const names = env.output
          .trim()
          .split('\n')
          .map((line) => line.split('=')[0])
          .sort();
        expect(names).toEqual([
          'HOME',
          'LANG',
          'PATH',
          'PWD',
          'SHLVL',
          'TERM',
          'TMPDIR',
          '_',
          'file_cache_dir',
          'file_state_dir',
        ]);
      } finally {
        delete process.env['OPENAI_API_KEY'];
        delete process.env['METATRON_SECRET_TOKEN'];
      }
    });

    it('has no capabilities and cannot create namespaces of its own', async () => {
      const result = await bash(
        "grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status; unshare -U true 2>/dev/null && echo unshared",
      );
      expect(result.output).toBe(
        'CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\n',
      );
    });
  });

  describe('limits', () => {
    it('kills the whole tree at the timeout, background and new-session children too', async () => {
      const result = await bash(
        [
          'readlink /proc/self/ns/pid > file_cache_dir/ns',
          '(sleep 3; echo late > file_cache_dir/late-1) &',
          "setsid bash -c 'sleep 3; echo late > file_cache_dir/late-2' &",
          'nohup sleep 100 >/dev/null 2>&1 &',
          'echo started',
          'sleep 100',
        ].join('\n'),
        { timeout_seconds: 1 },
      );
      expect(result).toMatchObject({
        exit_code: null,
        timed_out: true,
        truncated: false,
      });
      expect(result.output).toMatch(/^started\n\[timed out after 1 s/);
      const ns = readFileSync(join(real.file_cache_dir, 'ns'), 'utf8').trim();
      expect(ns).toMatch(/^pid:\[\d+\]$/);
      expect(await goneWithin(ns, 10_000)).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(existsSync(join(real.file_cache_dir, 'late-1'))).toBe(false);
      expect(existsSync(join(real.file_cache_dir, 'late-2'))).toBe(false);
    });

    it('ends background processes with the command instead of waiting for them', async () => {
      const result = await bash(
        '(sleep 2; echo late > file_cache_dir/bg-late) & sleep 60 > /dev/null & echo done',
      );
      expect(result).toEqual({
        exit_code: 0,
        output: 'done\n',
        truncated: false,
        timed_out: false,
      });
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(existsSync(join(real.file_cache_dir, 'bg-late'))).toBe(false);
    });

    it('kills the command when the turn is cancelled (Stop, the turn timeout)', async () => {
      const stop = new AbortController();
      setTimeout(() => stop.abort(), 300);
      const result = JSON.parse(
        await tool.execute({ cmd: 'echo working; sleep 30' }, {
          signal: stop.signal,
        } as AiToolContext),
      );
      expect(result).toEqual({
        exit_code: null,
        output: 'working\n[cancelled: the command was killed]',
        truncated: false,
        timed_out: false,
      });
    });

    it('caps the output at 256 KiB and says so', async () => {
      const result = await bash("head -c 1000000 /dev/zero | tr '\\0' a");
      expect(result.exit_code).toBe(0);
      expect(result.truncated).toBe(true);
      expect(result.timed_out).toBe(false);
      const [shown, note] = result.output.split('\n[');
      expect(shown).toBe('a'.repeat(BASH_LIMITS.outputMaxBytes) + '');
      expect(note).toBe(
        'output cut: the first 256 KiB of 1000000 bytes are shown]',
      );
    });

    it('stops an endless output flood early instead of burning the timeout', async () => {
      const result = await bash('yes', { timeout_seconds: 60 });
      expect(result.exit_code).toBeNull();
      expect(result.timed_out).toBe(false);
      expect(result.truncated).toBe(true);
      expect(result.output).toMatch(
        /\[stopped: the command kept writing output past 16 MiB\]$/,
      );
      expect(result.output.length).toBeLessThan(
        BASH_LIMITS.outputMaxBytes + 200,
      );
    });

    it('bounds a fork bomb and leaves the machine fine', async () => {
      const result = await bash(
        'readlink /proc/self/ns/pid > file_cache_dir/bomb-ns; bomb() { bomb | bomb & }; bomb; sleep 20',
        { timeout_seconds: 20 },
      );
      // Stopped by the process cap (the watchdog or RLIMIT_NPROC), long before the timeout.
      expect(result.timed_out).toBe(false);
      expect(result.exit_code).toBeNull();
      expect(result.output).toMatch(
        /\[stopped: the command started more than 128 processes\]$/,
      );
      const ns = readFileSync(
        join(real.file_cache_dir, 'bomb-ns'),
        'utf8',
      ).trim();
      // Tearing down a namespace of a few hundred processes takes the kernel longer on a loaded machine.
      expect(await goneWithin(ns, 60_000)).toEqual([]);
      expect(spawnSync('true').status).toBe(0);
    }, 120_000);

    it('stops a command whose processes together hold more than 2 GiB', async () => {
      // Three processes of 900 MiB each: every one is under the per-process limit, together they are not.
      const result = await bash(
        'for i in 1 2 3; do dd if=/dev/zero of=/dev/null bs=900M count=40 status=none & done; wait; echo finished',
        { timeout_seconds: 60 },
      );
      expect(result.timed_out).toBe(false);
      expect(result.exit_code).toBeNull();
      expect(result.output).not.toContain('finished');
      expect(result.output).toMatch(
        /\[stopped: the command's processes used more than 2 GiB of memory together\]$/,
      );
    });

    it('caps processes with RLIMIT_NPROC, memory per process and file size', async () => {
      const result = await bash(
        'ulimit -u; ulimit -d; ulimit -f; dd if=/dev/zero of=/dev/null bs=1200M count=1 2>&1 | head -1',
      );
      expect(result.output).toBe(
        '128\n1048576\n2097152\ndd: memory exhausted by input buffer of size 1258291200 bytes (1.2 GiB)\n',
      );
    });
  });

  describe('where bwrap cannot run', () => {
    it('is not offered when bwrap is missing, and says why', async () => {
      const missing = new BashSandbox(
        { bwrapPath: '/nonexistent/bin/bwrap' },
        dirs,
      );
      const off = new BashTool(missing, dirs, fixedSecrets([]));
      expect(await off.isAvailable()).toBe(false);
      expect(await off.unavailableReason()).toBe(
        'bubblewrap (bwrap) is not installed: install the package bubblewrap (Debian: apt-get install bubblewrap) to enable bash',
      );
      await expect(
        missing.run({
          cmd: 'true',
          cwd: real.file_cache_dir,
          timeoutSeconds: 5,
        }),
      ).rejects.toThrow(/bash is not available/);
    });

    it('is not offered when bwrap cannot build the sandbox (and never runs the command without it)', async () => {
      // A stand-in "bwrap" that fails like one without user namespaces, and would leave a trace if it ran the command.
      const fake = join(dataDir, 'fake-bwrap');
      writeFileSync(
        fake,
        `#!/bin/sh\necho "bwrap: No permissions to creating new namespace" >&2\ntouch ${dataDir}/fake-ran\nexit 1\n`,
        { mode: 0o755 },
      );
      const broken = new BashSandbox({ bwrapPath: fake }, dirs);
      expect(await broken.unavailableReason()).toBe(
        'bubblewrap cannot create a sandbox on this machine (bwrap: No permissions to creating new namespace): user namespaces may be disabled',
      );
      rmSync(join(dataDir, 'fake-ran'), { force: true });
      await expect(
        new BashTool(broken, dirs, fixedSecrets([])).execute(
          { cmd: 'echo hi' },
          context,
        ),
      ).rejects.toThrow(/bash is not available/);
      expect(existsSync(join(dataDir, 'fake-ran'))).toBe(false);
    });
  });
});

import {
  ConfigError,
  loadAppConfig,
  logLevelsFrom,
  redactMongoUri,
} from './app-config';

describe('loadAppConfig', () => {
  it('has safe defaults: loopback, port 3000, ./data, embedded database', () => {
    const config = loadAppConfig({}, '/srv/metatron');
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      dataDir: '/srv/metatron/data',
      mongodbUri: undefined,
      logLevel: 'log',
      logFormat: 'text',
      sessionTtlDays: 30,
      cookieSecure: 'auto',
    });
    expect(config.allowedHosts).toEqual(['localhost', '127.0.0.1', '::1']);
  });

  it('honours every variable', () => {
    const config = loadAppConfig(
      {
        PORT: '8080',
        HOST: 'metatron.lan',
        DATA_DIR: '/var/lib/metatron',
        MONGODB_URI: 'mongodb://db:27017/metatron',
        LOG_LEVEL: 'debug',
        LOG_FORMAT: 'json',
        SESSION_TTL_DAYS: '7',
        ALLOWED_HOSTS: 'Box.local, other',
        COOKIE_SECURE: 'always',
      },
      '/x',
    );
    expect(config).toMatchObject({
      port: 8080,
      host: 'metatron.lan',
      dataDir: '/var/lib/metatron',
      mongodbUri: 'mongodb://db:27017/metatron',
      logLevel: 'debug',
      logFormat: 'json',
      sessionTtlDays: 7,
      cookieSecure: 'always',
    });
    expect(config.allowedHosts).toEqual([
      'localhost',
      '127.0.0.1',
      '::1',
      'metatron.lan',
      'box.local',
      'other',
    ]);
  });

  it('lets ALLOWED_HOSTS=* switch the host check off', () => {
    expect(loadAppConfig({ ALLOWED_HOSTS: '*' }).allowedHosts).toBeNull();
  });

  it('takes BWRAP_PATH only as an absolute path', () => {
    expect(loadAppConfig({}).bwrapPath).toBeUndefined();
    expect(loadAppConfig({ BWRAP_PATH: '/opt/bin/bwrap' }).bwrapPath).toBe(
      '/opt/bin/bwrap',
    );
    expect(() => loadAppConfig({ BWRAP_PATH: 'bin/bwrap' })).toThrow(
      'BWRAP_PATH must be an absolute path (got "bin/bwrap")',
    );
  });

  it('takes WHATSAPP_SOCKET_MODULE only as the absolute path of an existing file', () => {
    expect(loadAppConfig({}).whatsappSocketModule).toBeUndefined();
    expect(
      loadAppConfig({ WHATSAPP_SOCKET_MODULE: __filename })
        .whatsappSocketModule,
    ).toBe(__filename);
    for (const bad of [
      'relative/fake.js',
      '/no/such/fake-socket.js',
      __dirname,
    ]) {
      expect(() => loadAppConfig({ WHATSAPP_SOCKET_MODULE: bad })).toThrow(
        `WHATSAPP_SOCKET_MODULE must be the absolute path of an existing file (got "${bad}")`,
      );
    }
  });

  it('reads the WhatsApp auto-reply limits and refuses bad ones', () => {
    expect(loadAppConfig({}).whatsappAutoReply).toEqual({
      staleMs: 6 * 3_600_000,
      perContactIntervalMs: 10_000,
      perMinute: 30,
      loopReplies: 10,
      loopWindowMs: 180_000,
      loopPauseMs: 1_800_000,
      concurrentTurns: 32,
    });
    expect(
      loadAppConfig({
        WHATSAPP_REPLIES_PER_MINUTE: '0',
        WHATSAPP_STALE_HOURS: '1',
        AUTO_REPLY_CONCURRENCY: '4',
      }).whatsappAutoReply,
    ).toMatchObject({ perMinute: 0, staleMs: 3_600_000, concurrentTurns: 4 });
    expect(() => loadAppConfig({ AUTO_REPLY_CONCURRENCY: '0' })).toThrow(
      'AUTO_REPLY_CONCURRENCY must be a whole number from 1 to 1000 (got "0")',
    );
    expect(() => loadAppConfig({ WHATSAPP_REPLY_INTERVAL_MS: 'soon' })).toThrow(
      'WHATSAPP_REPLY_INTERVAL_MS must be a whole number from 0 to 3600000 (got "soon")',
    );
  });

  it('limits scheduled jobs to MAX_CRONJOBS (100 by default) and refuses bad values', () => {
    expect(loadAppConfig({}).automations.maxCronJobs).toBe(100);
    expect(loadAppConfig({ MAX_CRONJOBS: '5' }).automations.maxCronJobs).toBe(
      5,
    );
    for (const bad of ['0', '-1', 'many', '10001'])
      expect(() => loadAppConfig({ MAX_CRONJOBS: bad })).toThrow(
        `MAX_CRONJOBS must be a whole number from 1 to 10000 (got "${bad}")`,
      );
  });

  it('reads MEMORY_EMBEDDINGS (auto by default) and its query timeout, refusing bad values', () => {
    expect(loadAppConfig({}).memoryEmbeddings).toEqual({
      mode: 'auto',
      queryTimeoutMs: 1500,
      recallWaitMs: 300,
    });
    expect(
      loadAppConfig({
        MEMORY_EMBEDDINGS: 'off',
        MEMORY_EMBEDDING_TIMEOUT_MS: '300',
        MEMORY_RECALL_WAIT_MS: '0',
      }).memoryEmbeddings,
    ).toEqual({ mode: 'off', queryTimeoutMs: 300, recallWaitMs: 0 });
    expect(() => loadAppConfig({ MEMORY_EMBEDDINGS: 'always' })).toThrow(
      'MEMORY_EMBEDDINGS must be one of auto, openai, gemini, off (got "always")',
    );
    expect(() => loadAppConfig({ MEMORY_EMBEDDING_TIMEOUT_MS: '50' })).toThrow(
      'MEMORY_EMBEDDING_TIMEOUT_MS must be a whole number from 100',
    );
    expect(() => loadAppConfig({ MEMORY_RECALL_WAIT_MS: '20000' })).toThrow(
      'MEMORY_RECALL_WAIT_MS must be a whole number from 0 to 10000',
    );
  });

  it('names every bad variable in one error', () => {
    let error: unknown;
    try {
      loadAppConfig({
        PORT: '70000',
        LOG_LEVEL: 'loud',
        MONGODB_URI: 'postgres://x',
        SESSION_TTL_DAYS: '1.5',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toEqual([
      'PORT must be a whole number from 1 to 65535 (got "70000")',
      'MONGODB_URI must start with mongodb:// or mongodb+srv://',
      'LOG_LEVEL must be one of fatal, error, warn, log, debug, verbose (got "loud")',
      'SESSION_TTL_DAYS must be a whole number from 1 to 365 (got "1.5")',
    ]);
  });
});

describe('logLevelsFrom', () => {
  it('includes the level and everything more severe', () => {
    expect(logLevelsFrom('warn')).toEqual(['fatal', 'error', 'warn']);
  });
});

describe('redactMongoUri', () => {
  it('hides the password', () => {
    expect(redactMongoUri('mongodb://me:s3cret@db:27017/x')).toBe(
      'mongodb://me:****@db:27017/x',
    );
    expect(redactMongoUri('mongodb://db:27017/x')).toBe('mongodb://db:27017/x');
  });
});

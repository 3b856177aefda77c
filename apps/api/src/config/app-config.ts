import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { LogLevel } from '@nestjs/common';

export type LogFormat = 'text' | 'json';
export type CookieSecureMode = 'auto' | 'always' | 'never';

/** Everything the server reads from its environment, validated once at boot. */
export interface AppConfig {
  port: number;
  host: string;
  /** Absolute path; holds the embedded database files and later the media. */
  dataDir: string;
  /** Unset: start the embedded database. */
  mongodbUri: string | undefined;
  /**
   * EMBEDDED_DB_TCP: unset = the embedded database listens only on a Unix socket (owner only);
   * a port (0 = a free one) = it listens on that loopback TCP port, open to every local user.
   */
  embeddedDbTcpPort: number | undefined;
  logLevel: LogLevel;
  logFormat: LogFormat;
  sessionTtlDays: number;
  /** Host names the server answers to (DNS-rebinding guard); `null` = any. */
  allowedHosts: string[] | null;
  /** Extra origins (`https://host[:port]`) allowed to send state-changing requests, e.g. a reverse proxy's. */
  trustedOrigins: string[];
  cookieSecure: CookieSecureMode;
  ferretdbBin: string;
  webDistDir: string;
  /** Caps of one LLM turn (chat, cron, pulse and auto-reply alike). */
  llm: LlmLimits;
  automations: AutomationLimits;
  webSearch: WebSearchConfig;
  media: MediaConfig;
  memoryEmbeddings: MemoryEmbeddingsConfig;
  whatsappAutoReply: WhatsAppAutoReplyLimits;
  voice: VoiceLimits;
  /**
   * Operator/test seam: absolute path of a CommonJS module exporting `createSocket(options)`,
   * used instead of Baileys for the WhatsApp link (the browser tests' fake). Unset in production.
   */
  whatsappSocketModule: string | undefined;
  /** BWRAP_PATH: the bubblewrap binary the bash tool runs in; unset = `bwrap` on PATH. */
  bwrapPath: string | undefined;
}

/** Vector search of the memory (embeddings of notes and messages). */
export interface MemoryEmbeddingsConfig {
  /** MEMORY_EMBEDDINGS: `auto` (the OpenAI key, else the Gemini key), `openai`, `gemini`, or `off` (keyword search only). */
  mode: 'auto' | 'openai' | 'gemini' | 'off';
  /** MEMORY_EMBEDDING_TIMEOUT_MS: how long a search waits for its query's embedding before answering by keywords. */
  queryTimeoutMs: number;
  /** MEMORY_RECALL_WAIT_MS: how long an owner's turn waits for its message's embedding before recalling notes by keywords. */
  recallWaitMs: number;
}

/** Limits of one voice call. */
export interface VoiceLimits {
  /** VOICE_MAX_CALL_MINUTES: a call is ended after this long. */
  maxCallMs: number;
  /** VOICE_SILENCE_SECONDS: a call nobody speaks in for this long is ended. */
  silenceMs: number;
}

export interface WebSearchConfig {
  /** Brave Search API base (tests point it at a local fake). */
  braveBaseUrl: string;
  /** DuckDuckGo's HTML results, used when no Brave key is saved (tests point it at a local fake). */
  duckduckgoBaseUrl: string;
  timeoutMs: number;
}

/** Limits of the WhatsApp auto-reply (0 turns the rate limits and the loop guard off). */
export interface WhatsAppAutoReplyLimits {
  /** Messages older than this (their own time) are marked `stale` and never answered. */
  staleMs: number;
  /** At most one reply per contact this often. */
  perContactIntervalMs: number;
  /** At most this many replies per minute over all contacts. */
  perMinute: number;
  /** Bot-loop guard: this many replies to one contact within `loopWindowMs` pause it. */
  loopReplies: number;
  loopWindowMs: number;
  /** How long a looping contact gets no auto-replies. */
  loopPauseMs: number;
  /** Contacts whose turns run at once, per channel (each contact's own messages stay in order). */
  concurrentTurns: number;
}

export interface MediaConfig {
  /** Largest attachment accepted (bytes); larger uploads get 413. */
  attachmentMaxBytes: number;
  /** How long one image generation or edit may take. */
  imageTimeoutMs: number;
}

export interface AutomationLimits {
  /** A job run missed while the app was down is caught up at start if it was due at most this long ago. */
  catchUpWindowMs: number;
  /** Runs failing one after another before a job is flagged as failing. */
  failureAlertAfter: number;
  /** Run records kept per job (and for Pulse); older ones are pruned. */
  runHistoryLimit: number;
  /** Scheduled jobs that may exist at once (REST, manage_cronjob and db_query alike). */
  maxCronJobs: number;
}

export interface LlmLimits {
  /** Earlier messages sent with each turn. */
  historyLimit: number;
  /** Model calls that end in tool calls, per turn. */
  maxToolRounds: number;
  toolTimeoutMs: number;
  turnTimeoutMs: number;
  /** A provider silent this long (no chunk, tools not counted) ends the reply with an error; 0 = never. */
  stallTimeoutMs: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
  }
}

const LOG_LEVELS: readonly LogLevel[] = [
  'fatal',
  'error',
  'warn',
  'log',
  'debug',
  'verbose',
];
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/** Reads and validates the environment; throws one ConfigError naming every bad variable. */
export function loadAppConfig(
  env: NodeJS.ProcessEnv,
  cwd: string = process.cwd(),
): AppConfig {
  const problems: string[] = [];
  const text = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value ? value : undefined;
  };
  const integer = (
    name: string,
    fallback: number,
    min: number,
    max: number,
  ): number => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) {
      problems.push(
        `${name} must be a whole number from ${min} to ${max} (got "${raw}")`,
      );
      return fallback;
    }
    return value;
  };
  const oneOf = <T extends string>(
    name: string,
    allowed: readonly T[],
    fallback: T,
  ): T => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      problems.push(
        `${name} must be one of ${allowed.join(', ')} (got "${raw}")`,
      );
      return fallback;
    }
    return raw as T;
  };
  const path = (name: string, fallback: string): string => {
    const raw = text(name) ?? fallback;
    return isAbsolute(raw) ? raw : resolve(cwd, raw);
  };

  const port = integer('PORT', 3000, 1, 65535);
  const host = text('HOST') ?? '127.0.0.1';
  if (/[\s/]/.test(host))
    problems.push(`HOST must be a host name or IP address (got "${host}")`);

  const mongodbUri = text('MONGODB_URI');
  if (
    mongodbUri !== undefined &&
    !/^mongodb(\+srv)?:\/\/\S+$/.test(mongodbUri)
  ) {
    problems.push('MONGODB_URI must start with mongodb:// or mongodb+srv://');
  }

  // Opt-in: FerretDB 1.x has no authentication, so a TCP port is open to every local user.
  const rawTcp = text('EMBEDDED_DB_TCP');
  let embeddedDbTcpPort: number | undefined;
  if (rawTcp === '1' || rawTcp === 'true') embeddedDbTcpPort = 0;
  else if (rawTcp === '0' || rawTcp === 'false') embeddedDbTcpPort = undefined;
  else if (rawTcp !== undefined) {
    if (/^\d+$/.test(rawTcp) && +rawTcp >= 1024 && +rawTcp <= 65535)
      embeddedDbTcpPort = +rawTcp;
    else
      problems.push(
        `EMBEDDED_DB_TCP must be 1 (a free loopback port), a port from 1024 to 65535, or 0 (Unix socket only) (got "${rawTcp}")`,
      );
  }

  const rawHosts = text('ALLOWED_HOSTS');
  let allowedHosts: string[] | null;
  if (rawHosts === '*') {
    allowedHosts = null;
  } else {
    const listed = rawHosts
      ? rawHosts
          .split(',')
          .map((h) => h.trim().toLowerCase())
          .filter(Boolean)
      : [];
    const bindName = ['0.0.0.0', '::'].includes(host)
      ? []
      : [host.toLowerCase()];
    allowedHosts = [...new Set([...LOOPBACK_NAMES, ...bindName, ...listed])];
  }

  const trustedOrigins = parseTrustedOrigins(text('TRUSTED_ORIGINS'), problems);

  const braveBaseUrl = (
    text('BRAVE_SEARCH_BASE_URL') ?? 'https://api.search.brave.com/res/v1'
  ).replace(/\/+$/, '');
  if (!/^https?:\/\/\S+$/.test(braveBaseUrl))
    problems.push(
      `BRAVE_SEARCH_BASE_URL must be an http(s) URL (got "${braveBaseUrl}")`,
    );

  const duckduckgoBaseUrl = (
    text('DUCKDUCKGO_BASE_URL') ?? 'https://html.duckduckgo.com'
  ).replace(/\/+$/, '');
  if (!/^https?:\/\/\S+$/.test(duckduckgoBaseUrl))
    problems.push(
      `DUCKDUCKGO_BASE_URL must be an http(s) URL (got "${duckduckgoBaseUrl}")`,
    );

  const whatsappSocketModule = text('WHATSAPP_SOCKET_MODULE');
  if (whatsappSocketModule !== undefined && !isFile(whatsappSocketModule)) {
    problems.push(
      `WHATSAPP_SOCKET_MODULE must be the absolute path of an existing file (got "${whatsappSocketModule}")`,
    );
  }

  const bwrapPath = text('BWRAP_PATH');
  if (bwrapPath !== undefined && !isAbsolute(bwrapPath))
    problems.push(`BWRAP_PATH must be an absolute path (got "${bwrapPath}")`);

  const config: AppConfig = {
    port,
    host,
    dataDir: path('DATA_DIR', './data'),
    mongodbUri,
    embeddedDbTcpPort,
    logLevel: oneOf('LOG_LEVEL', LOG_LEVELS, 'log'),
    logFormat: oneOf('LOG_FORMAT', ['text', 'json'] as const, 'text'),
    sessionTtlDays: integer('SESSION_TTL_DAYS', 30, 1, 365),
    allowedHosts,
    trustedOrigins,
    cookieSecure: oneOf(
      'COOKIE_SECURE',
      ['auto', 'always', 'never'] as const,
      'auto',
    ),
    ferretdbBin: path('FERRETDB_BIN', './tools/ferretdb/bin/ferretdb-launcher'),
    webDistDir: path('WEB_DIST_DIR', './dist/apps/web/browser'),
    llm: {
      historyLimit: integer('CHAT_HISTORY_LIMIT', 20, 0, 500),
      maxToolRounds: integer('LLM_MAX_TOOL_ROUNDS', 10, 1, 100),
      toolTimeoutMs: integer('LLM_TOOL_TIMEOUT_MS', 30_000, 100, 3_600_000),
      turnTimeoutMs: integer('LLM_TURN_TIMEOUT_MS', 300_000, 1_000, 86_400_000),
      stallTimeoutMs: integer('LLM_STALL_TIMEOUT_MS', 60_000, 0, 3_600_000),
    },
    voice: {
      maxCallMs: integer('VOICE_MAX_CALL_MINUTES', 30, 1, 240) * 60_000,
      silenceMs: integer('VOICE_SILENCE_SECONDS', 120, 1, 3_600) * 1_000,
    },
    automations: {
      catchUpWindowMs: integer('CRON_CATCH_UP_HOURS', 6, 0, 168) * 3_600_000,
      failureAlertAfter: integer('CRON_FAILURE_ALERT_AFTER', 3, 1, 100),
      runHistoryLimit: integer('AUTOMATION_RUN_HISTORY', 200, 10, 10_000),
      maxCronJobs: integer('MAX_CRONJOBS', 100, 1, 10_000),
    },
    webSearch: {
      braveBaseUrl,
      duckduckgoBaseUrl,
      timeoutMs: integer('WEB_SEARCH_TIMEOUT_MS', 10_000, 500, 120_000),
    },
    whatsappAutoReply: {
      staleMs: integer('WHATSAPP_STALE_HOURS', 6, 0, 8_760) * 3_600_000,
      perContactIntervalMs: integer(
        'WHATSAPP_REPLY_INTERVAL_MS',
        10_000,
        0,
        3_600_000,
      ),
      perMinute: integer('WHATSAPP_REPLIES_PER_MINUTE', 30, 0, 10_000),
      loopReplies: integer('WHATSAPP_LOOP_REPLIES', 10, 0, 10_000),
      loopWindowMs: integer(
        'WHATSAPP_LOOP_WINDOW_MS',
        180_000,
        1_000,
        86_400_000,
      ),
      loopPauseMs: integer('WHATSAPP_LOOP_PAUSE_MS', 1_800_000, 0, 604_800_000),
      concurrentTurns: integer('AUTO_REPLY_CONCURRENCY', 32, 1, 1_000),
    },
    media: {
      attachmentMaxBytes:
        integer('ATTACHMENT_MAX_MB', 20, 1, 1024) * 1024 * 1024,
      imageTimeoutMs: integer('IMAGE_TIMEOUT_MS', 120_000, 1_000, 600_000),
    },
    memoryEmbeddings: {
      mode: oneOf(
        'MEMORY_EMBEDDINGS',
        ['auto', 'openai', 'gemini', 'off'] as const,
        'auto',
      ),
      queryTimeoutMs: integer(
        'MEMORY_EMBEDDING_TIMEOUT_MS',
        1_500,
        100,
        60_000,
      ),
      recallWaitMs: integer('MEMORY_RECALL_WAIT_MS', 300, 0, 10_000),
    },
    whatsappSocketModule,
    bwrapPath,
  };
  if (problems.length) throw new ConfigError(problems);
  return config;
}

/** `https://Metatron.example/, http://box:8080` → `['https://metatron.example', 'http://box:8080']`. */
function parseTrustedOrigins(
  raw: string | undefined,
  problems: string[],
): string[] {
  const origins = new Set<string>();
  for (const entry of (raw ?? '').split(',').map((o) => o.trim())) {
    if (!entry) continue;
    let url: URL | null = null;
    try {
      url = new URL(entry);
    } catch {
      url = null;
    }
    // An origin is scheme, host and port only: no path, query, fragment or credentials.
    if (
      !url ||
      !['http:', 'https:'].includes(url.protocol) ||
      !/^https?:\/\/[^/?#@\s]+\/?$/i.test(entry)
    ) {
      problems.push(
        `TRUSTED_ORIGINS must be comma-separated origins such as https://metatron.example or http://192.168.1.5:3000 (got "${entry}")`,
      );
      continue;
    }
    origins.add(url.origin);
  }
  return [...origins];
}

function isFile(path: string): boolean {
  if (!isAbsolute(path)) return false;
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Log levels at and above the configured one, as Nest's logger wants them. */
export function logLevelsFrom(level: LogLevel): LogLevel[] {
  return LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(level) + 1);
}

/** `mongodb://user:secret@host/db` → `mongodb://user:****@host/db`, for logs and errors. */
export function redactMongoUri(uri: string): string {
  return uri.replace(/^(mongodb(?:\+srv)?:\/\/[^:/@]+):[^@/]*@/, '$1:****@');
}

import { fieldLabel } from '../http/field-labels';
import {
  BadRequestException,
  ConflictException,
  Injectable,
  Logger,
  NotFoundException,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import { Model, Types } from 'mongoose';
import { z } from 'zod';
import {
  MCP_SERVER_NAME_PATTERN,
  type CreateMcpServerRequest,
  type McpServerStatus,
  type McpServerView,
  type McpSignInStarted,
  type McpToolView,
  type UpdateMcpServerRequest,
} from '@metatronos/shared-types';
import type { AiMode, AiTool, AiToolSource } from '../ai-tools/ai-tool';
import { AiToolRegistry } from '../ai-tools/ai-tool-registry';
import { Clock } from '../clock/clock';
import { isDuplicateKey } from '../database/duplicate-key';
import { AppEventBus } from '../events/app-event-bus';
import { KnownSecrets } from '../secrets/known-secrets';
import { isMaskedSecret, maskSecret } from '../settings/secret-mask';
import {
  decideAddress,
  isLocalhostName,
  normaliseHostPort,
  parseFetchUrl,
} from '../url-fetch/address-guard';
import { UrlFetcher } from '../url-fetch/url-fetcher';
import { McpConnection } from './mcp-connection';
import { guardedMcpFetch } from './mcp-http-fetch';
import {
  McpOAuth,
  McpOAuthRefused,
  MCP_OAUTH_CALLBACK_PATH,
  type McpOAuthTarget,
} from './mcp-oauth';
import { McpSandbox } from './mcp-sandbox';
import {
  buildServerTools,
  fullToolNames,
  isOffered,
  mcpModeName,
  type McpServerHandle,
} from './mcp-tools';
import {
  approveTools,
  changeOf,
  isApproved,
  reconcileTools,
  type ListedTool,
  type StoredMcpTool,
} from './mcp-trust';
import { McpServerRecord } from './schemas/mcp-server.schema';

const MAX_SERVERS = 32;
/** Header and env values shorter than this are settings, not secrets (for KnownSecrets). */
const MIN_CONFIG_SECRET_LENGTH = 8;
/** How long POST waits for the first connection, so the answer shows the tools. */
const FIRST_CONNECT_WAIT_MS = 15_000;

const noNul = (what: string) =>
  z.string().refine((v) => !v.includes('\0'), `${what} must not contain NUL`);

/** Keys checked here rather than by z.record, whose key issue has no words of its own. */
function keysMatch(
  test: (key: string) => string | null,
): (value: Record<string, string>, ctx: z.RefinementCtx) => void {
  return (value, ctx) => {
    for (const key of Object.keys(value)) {
      const problem = test(key);
      if (problem)
        ctx.addIssue({ code: 'custom', message: problem, path: [key] });
    }
  };
}

const ENV = z
  .record(z.string(), noNul('a variable').pipe(z.string().max(8000)))
  .superRefine(
    keysMatch((key) =>
      /^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(key)
        ? null
        : 'names of variables are letters, digits and _ (not starting with a digit)',
    ),
  )
  .refine((v) => Object.keys(v).length <= 64, 'at most 64 variables');
/** Headers the transport sets itself: the owner cannot override them. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'connection',
  'transfer-encoding',
  'accept',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
]);
const HEADERS = z
  .record(
    z.string(),
    z
      .string()
      .max(8000)
      .refine((v) => !/[\r\n\0]/.test(v), 'a header value is one line'),
  )
  .superRefine(
    keysMatch((key) =>
      !/^[A-Za-z0-9!#$%&'*+^_`|~-]{1,100}$/.test(key)
        ? 'a header name is a token (letters, digits, -)'
        : RESERVED_HEADERS.has(key.toLowerCase())
          ? 'this header is set by the transport'
          : null,
    ),
  )
  .refine((v) => Object.keys(v).length <= 32, 'at most 32 headers');
const ARGS = z.array(noNul('an argument').pipe(z.string().max(4000))).max(64);
const COMMAND = z
  .string()
  .trim()
  .min(1, 'command is empty')
  .max(500)
  .refine((v) => !v.includes('\0'), 'command must not contain NUL');
const ALLOW_HOSTS = z.array(z.string().max(300)).max(16);

const CREATE = z
  .object({
    name: z
      .string()
      .regex(
        MCP_SERVER_NAME_PATTERN,
        'name is 1 to 24 lower-case letters, digits or _',
      ),
    command: COMMAND.optional(),
    args: ARGS.optional(),
    env: ENV.optional(),
    url: z.string().max(2000).optional(),
    headers: HEADERS.optional(),
    allowHosts: ALLOW_HOSTS.optional(),
    enabled: z.boolean().optional(),
  })
  .strict();
const UPDATE = z
  .object({
    command: COMMAND.optional(),
    args: ARGS.optional(),
    env: z.record(z.string(), z.string()).optional(),
    url: z.string().max(2000).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    allowHosts: ALLOW_HOSTS.optional(),
    enabled: z.boolean().optional(),
    tools: z
      .record(
        z.string(),
        z
          .object({
            enabled: z.boolean().optional(),
            unattended: z.boolean().optional(),
          })
          .strict(),
      )
      .optional(),
  })
  .strict();
const APPROVE = z
  .object({
    tools: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1).max(500)])
      .optional(),
  })
  .strict();

interface LiveServer {
  record: McpServerRecord;
  tools: StoredMcpTool[];
  connection: McpConnection | null;
  status: McpServerStatus;
  built: AiTool[];
}

/**
 * The owner's MCP servers: stored, kept connected, their tools reconciled with what
 * the owner approved, and offered to the registry as one mode per server. The model
 * never reaches this service except through the registry's calls of approved tools.
 */
@Injectable()
export class McpServersService
  implements AiToolSource, OnModuleInit, OnApplicationShutdown
{
  private readonly logger = new Logger('McpServers');
  private readonly live = new Map<string, LiveServer>();
  /** One change at a time per server (reconcile, approve, edit): FerretDB has no atomic read-modify-write. */
  private readonly locks = new Map<string, Promise<unknown>>();
  private closing = false;

  constructor(
    @InjectModel(McpServerRecord.name)
    private readonly servers: Model<McpServerRecord>,
    private readonly registry: AiToolRegistry,
    private readonly sandbox: McpSandbox,
    private readonly fetcher: UrlFetcher,
    private readonly events: AppEventBus,
    private readonly clock: Clock,
    private readonly oauth: McpOAuth,
    private readonly secrets: KnownSecrets,
  ) {}

  async onModuleInit(): Promise<void> {
    this.registry.useToolSource(this);
    // Header and env values and OAuth tokens: redacted from tool output, refused by write_file.
    this.secrets.contribute(() => this.secretValues());
    try {
      await this.oauth.load();
    } catch (error) {
      this.logger.warn(
        `Could not read the MCP sign-ins: ${(error as Error).message}`,
      );
    }
    await this.startStored();
  }

  /** Reads the stored servers and starts the enabled ones. */
  private async startStored(): Promise<void> {
    let records: McpServerRecord[] = [];
    try {
      records = await this.servers.find().sort({ name: 1 }).lean().exec();
    } catch (error) {
      this.logger.warn(
        `Could not read the MCP servers: ${(error as Error).message}`,
      );
    }
    for (const record of records) {
      const server = this.remember(record);
      if (record.enabled) void this.connect(server);
    }
  }

  /** A restore replaced the stored servers (and their header/env values): the running ones stop, the restored ones start. */
  @OnEvent('backup.restored')
  async reloadAfterRestore(): Promise<void> {
    const running = [...this.live.values()];
    this.live.clear();
    await Promise.all(running.map((s) => s.connection?.stop()));
    for (const server of running) this.emit(server, 'deleted');
    // Sign-ins (`mcp_oauth`) are never in a backup: a restored server with the same id keeps its own.
    await this.startStored();
    for (const server of this.live.values()) this.emit(server, 'created');
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.live.values()].map((s) => s.connection?.stop()));
  }

  // AiToolSource: read on every registry lookup, so kept ready-made.
  tools(): readonly AiTool[] {
    return [...this.live.values()].flatMap((s) => s.built);
  }

  modes(): readonly AiMode[] {
    return [...this.live.values()]
      .filter((s) => s.record.enabled)
      .map((s) => ({
        name: mcpModeName(s.record.name),
        description: `the owner's MCP server ${s.record.name} (${s.tools.filter(isOffered).length} tools)`,
      }));
  }

  async list(): Promise<McpServerView[]> {
    return [...this.live.values()]
      .sort((a, b) => a.record.name.localeCompare(b.record.name))
      .map((s) => this.view(s));
  }

  async get(idOrName: string): Promise<McpServerView> {
    return this.view(this.find(idOrName));
  }

  async create(body: unknown): Promise<McpServerView> {
    const input = parse(CREATE, body) as CreateMcpServerRequest;
    const stdio = input.command !== undefined;
    const http = input.url !== undefined;
    if (stdio === http)
      throw new BadRequestException(
        'Give either command (a stdio server) or url (an HTTP server), not both',
      );
    if (stdio && (input.headers || input.allowHosts))
      throw new BadRequestException(
        'headers and allowHosts are for HTTP servers (url)',
      );
    if (http && (input.args || input.env))
      throw new BadRequestException(
        'args and env are for stdio servers (command)',
      );
    const allowHosts = checkAllowHosts(input.allowHosts ?? []);
    const url = http ? checkUrl(input.url as string, allowHosts) : null;
    if ([...this.live.values()].some((s) => s.record.name === input.name))
      throw new ConflictException(
        `An MCP server named '${input.name}' already exists`,
      );
    if (this.live.size >= MAX_SERVERS)
      throw new BadRequestException(`At most ${MAX_SERVERS} MCP servers`);
    const now = this.clock.now();
    let created;
    try {
      created = await this.servers.create({
        name: input.name,
        kind: stdio ? 'stdio' : 'http',
        command: stdio ? input.command : null,
        args: input.args ?? [],
        env: input.env ?? {},
        url,
        headers: input.headers ?? {},
        allowHosts,
        enabled: input.enabled ?? true,
        toolsJson: '[]',
        listedOnce: false,
        createdAt: now,
        updatedAt: now,
      });
    } catch (error) {
      if (isDuplicateKey(error))
        throw new ConflictException(
          `An MCP server named '${input.name}' already exists`,
        );
      throw error;
    }
    const server = this.remember(created.toObject() as McpServerRecord);
    this.emit(server, 'created');
    if (server.record.enabled)
      await this.connect(server, FIRST_CONNECT_WAIT_MS);
    return this.view(server);
  }

  async update(idOrName: string, body: unknown): Promise<McpServerView> {
    // The body is checked first: a bad one is a 400 whatever the id.
    const input = parse(UPDATE, body) as UpdateMcpServerRequest;
    const server = this.find(idOrName);
    return this.locked(server, async () => {
      const record = server.record;
      const stdio = record.kind === 'stdio';
      if (
        stdio &&
        (input.url !== undefined ||
          input.headers !== undefined ||
          input.allowHosts !== undefined)
      )
        throw new BadRequestException(
          'This is a stdio server: url, headers and allowHosts do not apply',
        );
      if (
        !stdio &&
        (input.command !== undefined ||
          input.args !== undefined ||
          input.env !== undefined)
      )
        throw new BadRequestException(
          'This is an HTTP server: command, args and env do not apply',
        );
      const patch: Partial<McpServerRecord> = {};
      if (input.command !== undefined) patch.command = input.command;
      if (input.args !== undefined) patch.args = input.args;
      if (input.env !== undefined)
        patch.env = parse(ENV, keepMasked(input.env, record.env), 'env');
      if (input.headers !== undefined)
        patch.headers = parse(
          HEADERS,
          keepMasked(input.headers, record.headers),
          'headers',
        );
      if (input.allowHosts !== undefined)
        patch.allowHosts = checkAllowHosts(input.allowHosts);
      if (input.url !== undefined || patch.allowHosts !== undefined)
        patch.url = checkUrl(
          input.url ?? (record.url as string),
          patch.allowHosts ?? record.allowHosts,
        );
      if (input.enabled !== undefined) patch.enabled = input.enabled;
      const tools = server.tools.map((t) => ({ ...t }));
      if (input.tools) {
        for (const [name, switches] of Object.entries(input.tools)) {
          const tool = findTool(server, tools, name);
          if (switches.enabled !== undefined) tool.enabled = switches.enabled;
          if (switches.unattended !== undefined)
            tool.unattended = switches.unattended;
        }
      }
      const relaunch =
        ['command', 'args', 'env', 'url', 'headers', 'allowHosts'].some(
          (k) => k in patch,
        ) || patch.enabled !== undefined;
      const updated = {
        ...record,
        ...patch,
        toolsJson: JSON.stringify(tools),
        updatedAt: this.clock.now(),
      };
      await this.servers
        .updateOne(
          { _id: record._id },
          {
            $set: {
              ...patch,
              toolsJson: updated.toolsJson,
              updatedAt: updated.updatedAt,
            },
          },
        )
        .exec();
      // Tokens are bound to the server they were given for: another URL signs in again.
      if (patch.url !== undefined && patch.url !== record.url)
        await this.oauth.forget(record._id.toHexString());
      server.record = updated;
      server.tools = tools;
      this.rebuild(server);
      this.emit(server, 'updated');
      if (relaunch) {
        await server.connection?.stop();
        server.connection = null;
        if (updated.enabled) void this.connect(server);
        else this.setStatus(server, stoppedStatus(this.clock));
      }
      return this.view(server);
    });
  }

  async remove(idOrName: string): Promise<void> {
    const server = this.find(idOrName);
    await this.locked(server, async () => {
      await server.connection?.stop();
      server.connection = null;
      await this.servers.deleteOne({ _id: server.record._id }).exec();
      await this.oauth.forget(server.record._id.toHexString());
      this.live.delete(server.record._id.toHexString());
      this.emit(server, 'deleted');
      await this.sandbox
        .removeWorkDir(server.record.name)
        .catch((error: Error) =>
          this.logger.warn(
            `Could not remove the folder of MCP server ${server.record.name}: ${error.message}`,
          ),
        );
    });
  }

  async approve(
    idOrName: string,
    body: unknown,
  ): Promise<{ approved: string[]; server: McpServerView }> {
    const input = parse(APPROVE, body ?? {});
    const server = this.find(idOrName);
    return this.locked(server, async () => {
      const tools = server.tools.map((t) => ({ ...t }));
      const wanted =
        input.tools === undefined
          ? null
          : new Set(
              (Array.isArray(input.tools) ? input.tools : [input.tools]).map(
                (n) => findTool(server, tools, n).name,
              ),
            );
      const approved = approveTools(tools, wanted);
      await this.storeTools(server, tools, server.record.listedOnce);
      this.emit(server, 'tools');
      return { approved, server: this.view(server) };
    });
  }

  /**
   * The owner's "Sign in" for an HTTP server that asks for OAuth: the SDK's discovery,
   * dynamic registration and PKCE, and the authorization server's page to open. The
   * redirect comes back to `consoleOrigin` + MCP_OAUTH_CALLBACK_PATH.
   */
  async signIn(
    idOrName: string,
    consoleOrigin: string,
  ): Promise<McpSignInStarted> {
    const server = this.find(idOrName);
    const record = server.record;
    if (record.kind !== 'http')
      throw new BadRequestException('Only an HTTP server signs in (OAuth)');
    if (hasAuthorizationHeader(record))
      throw new BadRequestException(
        'This server uses the Authorization header you set: remove it to sign in with OAuth',
      );
    if (!record.enabled)
      throw new BadRequestException('Turn the server on before signing in');
    const authorizationUrl = await this.locked(server, async () => {
      try {
        return await this.oauth.startSignIn(
          this.oauthTarget(server),
          `${consoleOrigin}${MCP_OAUTH_CALLBACK_PATH}`,
        );
      } catch (error) {
        throw new BadRequestException(`Sign-in failed: ${oauthFailure(error)}`);
      } finally {
        this.emit(server, 'updated');
      }
    });
    if (authorizationUrl === null)
      await this.reconnect(server, FIRST_CONNECT_WAIT_MS);
    return { authorizationUrl, server: this.view(server) };
  }

  /**
   * The authorization server's redirect: `state` names the waiting sign-in (used once),
   * the code is exchanged with its PKCE verifier, and the server reconnects with the
   * tokens. Throws BadRequestException in plain words.
   */
  async finishSignIn(
    state: string,
    code: string | null,
    refusal: string | null,
  ): Promise<McpServerView> {
    const serverId = this.oauth.pendingServer(state);
    const server = serverId ? this.live.get(serverId) : undefined;
    if (!serverId || !server)
      throw new BadRequestException(
        'This sign-in link is not valid or has expired: start again from the console',
      );
    await this.locked(server, async () => {
      if (refusal !== null || !code) {
        await this.oauth.cancelSignIn(serverId);
        this.emit(server, 'updated');
        throw new BadRequestException(
          refusal !== null
            ? `The authorization server did not sign you in (${refusal})`
            : 'The authorization server sent no code',
        );
      }
      try {
        await this.oauth.finishSignIn(this.oauthTarget(server), state, code);
      } catch (error) {
        throw new BadRequestException(`Sign-in failed: ${oauthFailure(error)}`);
      } finally {
        this.emit(server, 'updated');
      }
    });
    await this.reconnect(server, FIRST_CONNECT_WAIT_MS);
    return this.view(server);
  }

  /** Sign out: the server's tokens are forgotten and it reconnects (it will ask for a sign-in). */
  async signOut(idOrName: string): Promise<McpServerView> {
    const server = this.find(idOrName);
    if (server.record.kind !== 'http')
      throw new BadRequestException('Only an HTTP server signs in (OAuth)');
    await this.locked(server, async () => {
      await this.oauth.signOut(server.record._id.toHexString());
      this.emit(server, 'updated');
    });
    await this.reconnect(server, FIRST_CONNECT_WAIT_MS);
    return this.view(server);
  }

  /** Every secret the servers hold (header and env values, OAuth tokens): for KnownSecrets. */
  secretValues(): string[] {
    const values: string[] = [];
    for (const { record } of this.live.values())
      values.push(
        ...[...Object.values(record.env), ...Object.values(record.headers)]
          // A flag like DEBUG=true is not a secret, and redacting "true" everywhere would garble output.
          .filter((v) => v.trim().length >= MIN_CONFIG_SECRET_LENGTH),
      );
    values.push(...this.oauth.secretValues());
    return values;
  }

  private async reconnect(server: LiveServer, waitMs = 0): Promise<void> {
    await server.connection?.stop();
    server.connection = null;
    if (!server.record.enabled) return;
    // Called outside the server's lock: the first listing is stored under it.
    await this.connect(server, waitMs);
  }

  private oauthTarget(server: LiveServer): McpOAuthTarget {
    const record = server.record;
    return {
      serverId: record._id.toHexString(),
      url: record.url as string,
      allowHosts: record.allowHosts,
      fetch: guardedMcpFetch(this.fetcher, record.allowHosts),
    };
  }

  private find(idOrName: string): LiveServer {
    const key = String(idOrName).trim();
    const byId = Types.ObjectId.isValid(key)
      ? this.live.get(key.toLowerCase())
      : undefined;
    const found =
      byId ?? [...this.live.values()].find((s) => s.record.name === key);
    if (!found) throw new NotFoundException('MCP server not found');
    return found;
  }

  private remember(stored: McpServerRecord): LiveServer {
    const record: McpServerRecord = {
      ...stored,
      args: stored.args ?? [],
      env: stored.env ?? {},
      headers: stored.headers ?? {},
      allowHosts: stored.allowHosts ?? [],
    };
    const server: LiveServer = {
      record,
      tools: parseTools(record.toolsJson),
      connection: null,
      status: record.enabled
        ? {
            state: 'connecting',
            message: 'connecting',
            toolCount: 0,
            transport: null,
            sandboxed: null,
            restarts: 0,
            retryAt: null,
            at: this.clock.now().toISOString(),
          }
        : stoppedStatus(this.clock),
      built: [],
    };
    this.live.set(record._id.toHexString(), server);
    this.rebuild(server);
    return server;
  }

  /** Starts the server's connection; waits for the first attempt at most `waitMs`. */
  private async connect(server: LiveServer, waitMs = 0): Promise<void> {
    if (this.closing) return;
    const record = server.record;
    const connection = new McpConnection(
      record.name,
      record.kind === 'stdio'
        ? {
            kind: 'stdio',
            plan: () =>
              this.sandbox.plan({
                name: record.name,
                command: record.command as string,
                args: record.args,
                env: record.env,
              }),
          }
        : {
            kind: 'http',
            url: record.url as string,
            headers: record.headers,
            fetch: guardedMcpFetch(this.fetcher, record.allowHosts, {
              origin: new URL(record.url as string).origin,
              names: Object.keys(record.headers),
            }),
            authProvider: hasAuthorizationHeader(record)
              ? undefined
              : this.oauth.connectProvider(this.oauthTarget(server)),
          },
      this.clock,
      {
        status: (status) => {
          if (server.connection === connection) this.setStatus(server, status);
        },
        tools: (listed) => {
          if (server.connection === connection)
            void this.onListed(server, listed);
        },
      },
    );
    server.connection = connection;
    const first = connection.start();
    if (waitMs > 0)
      await Promise.race([
        first,
        new Promise((done) => setTimeout(done, waitMs).unref()),
      ]);
    // The tools of the first listing are stored before the answer.
    await this.locks.get(record._id.toHexString());
  }

  private async onListed(
    server: LiveServer,
    listed: ListedTool[],
  ): Promise<void> {
    await this.locked(server, async () => {
      const first = !server.record.listedOnce;
      const tools = reconcileTools(server.tools, listed, first);
      await this.storeTools(server, tools, true);
      this.emit(server, 'tools');
    }).catch((error: Error) =>
      this.logger.warn(
        `Could not store the tools of ${server.record.name}: ${error.message}`,
      ),
    );
  }

  private async storeTools(
    server: LiveServer,
    tools: StoredMcpTool[],
    listedOnce: boolean,
  ): Promise<void> {
    const toolsJson = JSON.stringify(tools);
    const updatedAt = this.clock.now();
    await this.servers
      .updateOne(
        { _id: server.record._id },
        { $set: { toolsJson, listedOnce, updatedAt } },
      )
      .exec();
    server.record = { ...server.record, toolsJson, listedOnce, updatedAt };
    server.tools = tools;
    this.rebuild(server);
  }

  private rebuild(server: LiveServer): void {
    const handle: McpServerHandle = {
      name: server.record.name,
      ready: () =>
        server.record.enabled &&
        server.status.state === 'ready' &&
        server.connection !== null,
      call: (tool, args, signal, timeoutMs) => {
        if (!server.connection)
          throw new Error(
            `the MCP server '${server.record.name}' is not running`,
          );
        return server.connection.call(tool, args, signal, timeoutMs);
      },
    };
    server.built = server.record.enabled
      ? buildServerTools(handle, server.tools, this.registry.roomPerMode())
      : [];
  }

  private setStatus(server: LiveServer, status: McpServerStatus): void {
    server.status = status;
    this.emit(server, 'status');
  }

  private emit(
    server: LiveServer,
    change: 'created' | 'updated' | 'deleted' | 'status' | 'tools',
  ): void {
    this.events.emit('mcp.changed', {
      id: server.record._id.toHexString(),
      name: server.record.name,
      change,
      state: server.status.state,
      at: this.clock.now().toISOString(),
    });
  }

  private async locked<T>(
    server: LiveServer,
    work: () => Promise<T>,
  ): Promise<T> {
    const key = server.record._id.toHexString();
    const before = this.locks.get(key) ?? Promise.resolve();
    const run = before.catch(() => undefined).then(work);
    const tail = run.catch(() => undefined);
    this.locks.set(key, tail);
    void tail.then(() => {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    });
    return run;
  }

  private view(server: LiveServer): McpServerView {
    const { record } = server;
    const names = fullToolNames(
      record.name,
      server.tools.map((t) => t.name),
    );
    const ready = server.status.state === 'ready';
    const tools: McpToolView[] = server.tools.map((t) => ({
      name: t.name,
      fullName: names.get(t.name) as string,
      current: t.current,
      approvedDefinition: t.approved,
      approved: isApproved(t),
      enabled: t.enabled,
      unattended: t.unattended,
      change: changeOf(t),
      offered: ready && record.enabled && isOffered(t),
    }));
    return {
      id: record._id.toHexString(),
      name: record.name,
      mode: mcpModeName(record.name),
      kind: record.kind,
      command: record.command,
      args: [...record.args],
      env: masked(record.env),
      url: record.url,
      headers: masked(record.headers),
      allowHosts: [...record.allowHosts],
      enabled: record.enabled,
      status: server.status,
      oauth:
        record.kind === 'http'
          ? this.oauth.view(record._id.toHexString())
          : null,
      tools,
      createdAt: record.createdAt.toISOString(),
      updatedAt: record.updatedAt.toISOString(),
    };
  }
}

function hasAuthorizationHeader(record: McpServerRecord): boolean {
  return Object.keys(record.headers).some(
    (name) => name.toLowerCase() === 'authorization',
  );
}

/** A failed OAuth step in words for the owner: the SDK's and the guard's messages carry no secret. */
function oauthFailure(error: unknown): string {
  if (error instanceof McpOAuthRefused) return error.message;
  const message = error instanceof Error ? error.message : String(error);
  if (/Refused:/.test(message))
    return message.replace(/^.*?Refused:/, 'refused:').slice(0, 300);
  return (
    message.slice(0, 300) || 'the authorization server could not be reached'
  );
}

function stoppedStatus(clock: Clock): McpServerStatus {
  return {
    state: 'stopped',
    message: 'turned off by the owner',
    toolCount: 0,
    transport: null,
    sandboxed: null,
    restarts: 0,
    retryAt: null,
    at: clock.now().toISOString(),
  };
}

function parse<T>(schema: z.ZodType<T>, body: unknown, field?: string): T {
  const result = schema.safeParse(body, { reportInput: true });
  if (result.success) return result.data;
  // A null where a value belongs is named as such first (people send null to mean "none").
  const issue =
    result.error.issues.find((i) => i.input === null) ?? result.error.issues[0];
  const path = [field, ...issue.path.map(String)].filter(Boolean).join('.');
  const message =
    issue.code === 'unrecognized_keys'
      ? `Unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}`
      : issue.code === 'invalid_type' && issue.input === undefined
        ? `${path} is required`
        : issue.input === null
          ? `${fieldLabel(path)} must not be null`
          : `${path ? `${path}: ` : ''}${issue.message}`;
  throw new BadRequestException(message);
}

function checkAllowHosts(entries: readonly string[]): string[] {
  return [
    ...new Set(
      entries.map((entry, i) => {
        const normal = normaliseHostPort(entry);
        if (!normal)
          throw new BadRequestException(
            `allowHosts[${i}] must be host:port, like nas.local:8123 (got "${entry.slice(0, 80)}")`,
          );
        return normal;
      }),
    ),
  ];
}

/** The URL, checked without DNS: http(s), no credentials, and a literal address or localhost only when listed. */
function checkUrl(input: string, allowHosts: readonly string[]): string {
  const parsed = parseFetchUrl(input);
  if (!parsed.ok) throw new BadRequestException(`url: ${parsed.error}`);
  const { host, port, isIp, url } = parsed.value;
  const literal = isIp ? host : isLocalhostName(host) ? '127.0.0.1' : null;
  if (literal) {
    const decision = decideAddress(literal, {
      allowHostPorts: allowHosts,
      host,
      port,
    });
    if (!decision.allowed)
      throw new BadRequestException(
        `url: ${host} is ${decision.text}${decision.listable ? `: add "${host.includes(':') ? `[${host}]` : host}:${port}" to allowHosts for a server at home` : ' (never allowed)'}`,
      );
  }
  return url.href;
}

/** A map sent back from a GET: masked values keep what is stored under the same name. */
function keepMasked(
  next: Record<string, string>,
  stored: Record<string, string>,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(next).map(([name, value]) => [
      name,
      isMaskedSecret(value) && stored[name] !== undefined
        ? stored[name]
        : value,
    ]),
  );
}

function masked(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).map(([name, value]) => [
      name,
      maskSecret(value) ?? '',
    ]),
  );
}

function parseTools(json: string): StoredMcpTool[] {
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) ? (parsed as StoredMcpTool[]) : [];
  } catch {
    return [];
  }
}

function findTool(
  server: LiveServer,
  tools: StoredMcpTool[],
  name: string,
): StoredMcpTool {
  const names = fullToolNames(
    server.record.name,
    tools.map((t) => t.name),
  );
  const found =
    tools.find((t) => t.name === name) ??
    tools.find((t) => names.get(t.name) === name);
  if (!found)
    throw new BadRequestException(
      `The MCP server '${server.record.name}' has no tool '${name.slice(0, 80)}'`,
    );
  return found;
}

import { Logger } from '@nestjs/common';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type {
  OAuthClientProvider,
  UnauthorizedError,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerStatus } from '@metatronos/shared-types';
import type { Clock } from '../clock/clock';
import { McpOAuthRefused, McpSignInNeeded } from './mcp-oauth';
import type { StdioLaunchPlan } from './mcp-sandbox';
import type { ListedTool } from './mcp-trust';

/** The client SDK's parts (about 0.15 s of start-up to load): loaded at the first connection, not at boot. */
interface ClientSdk {
  Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
  SSEClientTransport: typeof SSEClientTransport;
  StdioClientTransport: typeof StdioClientTransport;
  StreamableHTTPClientTransport: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport;
  StreamableHTTPError: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPError;
  UnauthorizedError: typeof UnauthorizedError;
}
let clientSdk: ClientSdk | undefined;

async function loadClientSdk(): Promise<ClientSdk> {
  const [index, sse, stdio, streamableHttp, auth] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/client/auth.js'),
  ]);
  clientSdk = {
    Client: index.Client,
    SSEClientTransport: sse.SSEClientTransport,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPClientTransport: streamableHttp.StreamableHTTPClientTransport,
    StreamableHTTPError: streamableHttp.StreamableHTTPError,
    UnauthorizedError: auth.UnauthorizedError,
  };
  return clientSdk;
}

/** How to reach one server. */
export type McpEndpoint =
  | { kind: 'stdio'; plan: () => StdioLaunchPlan | { error: string } }
  | {
      kind: 'http';
      url: string;
      headers: Readonly<Record<string, string>>;
      fetch: FetchLike;
      /** OAuth 2.1 (the SDK's flow) when the owner set no Authorization header. */
      authProvider?: OAuthClientProvider;
    };

export interface McpConnectionEvents {
  status(status: McpServerStatus): void;
  tools(tools: ListedTool[]): void;
}

/** Restart timing: 0.5 s, 1 s, 2 s… up to a minute; a connection that stayed up a while starts again from the bottom. */
export const MCP_BACKOFF = {
  firstMs: 500,
  maxMs: 60_000,
  /** Up this long before a crash: the crash counts as the first again. */
  stableMs: 30_000,
  connectTimeoutMs: 20_000,
};

/** More would not fit any prompt; a server listing more is cut here. */
const MAX_LISTED_TOOLS = 500;
/** What a server's stderr may tell the owner about a failed start. */
const STDERR_TAIL = 600;
/** One JSON-RPC message from a stdio server may not be larger (a garbage flood is cut off). */
const STDIO_MAX_MESSAGE = 4 * 1024 * 1024;

/**
 * One owner's MCP server, kept connected: connects (stdio or Streamable HTTP, with the
 * old SSE transport as a fallback), lists the tools, follows `tools/list_changed`, and
 * after a crash or a failed start tries again with backoff. Never throws to its owner:
 * every failure becomes a status in plain words.
 */
export class McpConnection {
  private readonly logger: Logger;
  private client: Client | null = null;
  private stopped = false;
  private failures = 0;
  private readyAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private generation = 0;
  private current: McpServerStatus;
  private firstAttempt: Promise<void> | null = null;

  constructor(
    private readonly name: string,
    private readonly endpoint: McpEndpoint,
    private readonly clock: Clock,
    private readonly events: McpConnectionEvents,
  ) {
    this.logger = new Logger(`McpServer:${name}`);
    this.current = this.statusOf('connecting', 'connecting', 0);
  }

  get status(): McpServerStatus {
    return this.current;
  }

  /** Starts; resolves once the first attempt ended (ready or failed), never rejects. */
  start(): Promise<void> {
    this.firstAttempt ??= this.attempt(this.generation);
    return this.firstAttempt;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.generation++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const client = this.client;
    this.client = null;
    await client?.close().catch(() => undefined);
  }

  /** Calls a tool on the ready server. Throws in plain words when it is not ready or the call fails. */
  async call(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<CallToolResult> {
    const client = this.client;
    if (!client || this.current.state !== 'ready')
      throw new Error(
        `the MCP server '${this.name}' is not ready (${this.current.message})`,
      );
    const result = await client.callTool(
      { name: tool, arguments: args },
      undefined,
      { signal, timeout: timeoutMs },
    );
    return result as CallToolResult;
  }

  private async attempt(generation: number): Promise<void> {
    if (this.stopped || generation !== this.generation) return;
    this.setStatus(this.statusOf('connecting', 'connecting', 0));
    let stderr = '';
    try {
      const { client, transport } = await this.connect((chunk) => {
        stderr = (stderr + chunk).slice(-STDERR_TAIL);
      });
      if (this.stopped || generation !== this.generation) {
        await client.close().catch(() => undefined);
        return;
      }
      this.client = client;
      client.onclose = () => {
        if (this.client !== client) return;
        this.client = null;
        this.crashed(
          generation,
          `the server closed the connection${tail(stderr)}`,
        );
      };
      const tools = await listAll(client);
      this.readyAt = this.clock.now().getTime();
      this.events.tools(tools);
      const sandboxed = transport.kind === 'stdio' ? transport.sandboxed : null;
      this.setStatus({
        ...this.statusOf(
          'ready',
          `ready with ${tools.length} tool${tools.length === 1 ? '' : 's'}`,
          tools.length,
        ),
        transport: transport.kind,
        sandboxed,
      });
    } catch (error) {
      const client = this.client;
      this.client = null;
      await client?.close().catch(() => undefined);
      if (isSignInNeeded(error)) {
        this.waitForSignIn(generation);
        return;
      }
      this.crashed(generation, `${plainReason(error)}${tail(stderr)}`);
    }
  }

  /** Only the owner can sign in: no retry until the sign-in reconnects this server. */
  private waitForSignIn(generation: number): void {
    if (this.stopped || generation !== this.generation) return;
    this.readyAt = null;
    this.setStatus({
      ...this.statusOf(
        'needs-sign-in',
        'the server asks you to sign in (OAuth)',
        0,
      ),
      transport: 'streamable-http',
    });
  }

  private crashed(generation: number, reason: string): void {
    if (this.stopped || generation !== this.generation) return;
    const now = this.clock.now().getTime();
    if (this.readyAt !== null && now - this.readyAt >= MCP_BACKOFF.stableMs)
      this.failures = 0;
    this.readyAt = null;
    const delay = Math.min(
      MCP_BACKOFF.firstMs * 2 ** this.failures,
      MCP_BACKOFF.maxMs,
    );
    this.failures++;
    this.setStatus({
      ...this.statusOf('error', reason, 0),
      restarts: this.failures,
      retryAt: new Date(now + delay).toISOString(),
    });
    this.logger.warn(`${reason}; trying again in ${delay} ms`);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.generation++;
      void this.attempt(this.generation);
    }, delay);
    this.timer.unref();
  }

  private async connect(onStderr: (chunk: string) => void): Promise<{
    client: Client;
    transport:
      | { kind: 'stdio'; sandboxed: boolean }
      | { kind: 'streamable-http' | 'sse' };
  }> {
    const endpoint = this.endpoint;
    const {
      SSEClientTransport,
      StdioClientTransport,
      StreamableHTTPClientTransport,
      StreamableHTTPError,
    } = clientSdk ?? (await loadClientSdk());
    if (endpoint.kind === 'stdio') {
      const plan = endpoint.plan();
      if ('error' in plan) throw new PlainError(plan.error);
      const transport = new StdioClientTransport({
        command: plan.command,
        args: plan.args,
        env: plan.env,
        cwd: plan.cwd,
        stderr: 'pipe',
        maxBufferSize: STDIO_MAX_MESSAGE,
      } as ConstructorParameters<typeof StdioClientTransport>[0]);
      transport.stderr?.on('data', (chunk: Buffer) =>
        onStderr(chunk.toString('utf8')),
      );
      const client = this.newClient();
      await client.connect(transport, {
        timeout: MCP_BACKOFF.connectTimeoutMs,
      });
      return {
        client,
        transport: { kind: 'stdio', sandboxed: plan.sandboxed },
      };
    }
    const url = new URL(endpoint.url);
    const requestInit: RequestInit = { headers: { ...endpoint.headers } };
    const streamable = this.newClient();
    try {
      await streamable.connect(
        new StreamableHTTPClientTransport(url, {
          fetch: endpoint.fetch,
          requestInit,
          authProvider: endpoint.authProvider,
        }),
        { timeout: MCP_BACKOFF.connectTimeoutMs },
      );
      return { client: streamable, transport: { kind: 'streamable-http' } };
    } catch (error) {
      await streamable.close().catch(() => undefined);
      if (isSignInNeeded(error)) throw error;
      // Old servers answer the Streamable HTTP POST with 404/405: they speak the SSE transport.
      if (
        !(error instanceof StreamableHTTPError) ||
        error.code === undefined ||
        error.code < 400 ||
        error.code >= 500 ||
        error.code === 401 ||
        error.code === 403
      )
        throw error;
    }
    const sse = this.newClient();
    await sse.connect(
      new SSEClientTransport(url, {
        fetch: endpoint.fetch,
        requestInit,
        eventSourceInit: { fetch: endpoint.fetch },
      } as ConstructorParameters<typeof SSEClientTransport>[1]),
      { timeout: MCP_BACKOFF.connectTimeoutMs },
    );
    return { client: sse, transport: { kind: 'sse' } };
  }

  /** Only after `connect` loaded the SDK. */
  private newClient(): Client {
    if (!clientSdk) throw new Error('the MCP client SDK is not loaded');
    return new clientSdk.Client(
      { name: 'metatronos', version: '1.0.0' },
      {
        capabilities: {},
        listChanged: {
          tools: {
            autoRefresh: true,
            debounceMs: 100,
            onChanged: (error, tools) => {
              if (error || !tools) return;
              this.events.tools(tools.slice(0, MAX_LISTED_TOOLS).map(listed));
              this.setStatus({
                ...this.current,
                message: `ready with ${tools.length} tool${tools.length === 1 ? '' : 's'}`,
                toolCount: tools.length,
                at: this.clock.now().toISOString(),
              });
            },
          },
        },
      },
    );
  }

  private setStatus(status: McpServerStatus): void {
    this.current = status;
    this.events.status(status);
  }

  private statusOf(
    state: McpServerStatus['state'],
    message: string,
    toolCount: number,
  ): McpServerStatus {
    return {
      state,
      message,
      toolCount,
      transport: this.current?.transport ?? null,
      sandboxed: this.current?.sandboxed ?? null,
      restarts: this.failures,
      retryAt: null,
      at: this.clock.now().toISOString(),
    };
  }
}

class PlainError extends Error {}

function isSignInNeeded(error: unknown): boolean {
  // The SDK's error exists only once the SDK is loaded, and only the SDK throws it.
  const sdkError = clientSdk?.UnauthorizedError;
  return (
    error instanceof McpSignInNeeded ||
    (sdkError !== undefined && error instanceof sdkError)
  );
}

async function listAll(client: Client): Promise<ListedTool[]> {
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const answer = await client.listTools(cursor ? { cursor } : undefined, {
      timeout: MCP_BACKOFF.connectTimeoutMs,
    });
    tools.push(...answer.tools.map(listed));
    cursor = answer.nextCursor;
    if (!cursor || tools.length >= MAX_LISTED_TOOLS) break;
  }
  return tools.slice(0, MAX_LISTED_TOOLS);
}

function listed(tool: Tool): ListedTool {
  return {
    name: tool.name,
    definition: {
      description: tool.description ?? '',
      inputSchema: tool.inputSchema as Record<string, unknown>,
      annotations: (tool.annotations as Record<string, unknown>) ?? null,
    },
  };
}

function tail(stderr: string): string {
  const text = stderr.trim().split('\n').slice(-3).join(' / ').trim();
  return text ? ` (it said: ${text.slice(-300)})` : '';
}

/** An error from a start or a connection, in words the console shows. */
function plainReason(error: unknown): string {
  if (error instanceof PlainError || error instanceof McpOAuthRefused)
    return error.message;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  // Not loaded yet: the error cannot be the SDK's.
  if (
    clientSdk &&
    error instanceof clientSdk.StreamableHTTPError &&
    typeof code === 'number'
  ) {
    if (code === 401)
      return 'the server refused the authorization (401): check the Authorization header, or sign out and sign in again';
    return `the server answered HTTP ${code}`;
  }
  if (/ENOENT/.test(message)) return 'the command could not be started';
  if (/Connection closed/i.test(message))
    return 'the server exited before it answered';
  if (/timed out|timeout/i.test(message))
    return 'the server did not answer in time';
  if (/ECONNREFUSED/.test(message)) return 'the connection was refused';
  if (/Refused:/.test(message))
    return message.replace(/^.*?Refused:/, 'refused:');
  if (/Unexpected token|JSON|parse|invalid_union|Invalid/i.test(message))
    return `the server's answer is not MCP (${message.slice(0, 120)})`;
  return message.slice(0, 300) || 'the server could not be reached';
}

import { Inject, Injectable, Logger } from '@nestjs/common';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { NextFunction, Request, Response } from 'express';
import { ToolTurn } from '../actions/tool-turn';
import { toolError } from '../ai-tools/ai-tool';
import { AiToolRegistry, isToolError } from '../ai-tools/ai-tool-registry';
import { parseToolArguments } from '../ai-tools/tool-argument-schema';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { SettingsService } from '../settings/settings.service';
import { APP_VERSION } from '../version';
import {
  isMcpExposable,
  mcpCallProblem,
  mcpDescriptionNote,
  mcpInputSchema,
} from './mcp-exposure';
import { decideMcpOrigin } from './mcp-origin';
import { McpRateLimiter } from './mcp-rate-limiter';
import { McpTokensService, type McpCaller } from './mcp-tokens.service';

/** The server SDK (about 0.15 s of start-up to load): loaded at the first MCP request, not at boot. */
let serverSdk:
  | Promise<{
      McpServer: typeof import('@modelcontextprotocol/sdk/server/mcp.js').McpServer;
      StreamableHTTPServerTransport: typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js').StreamableHTTPServerTransport;
      types: typeof import('@modelcontextprotocol/sdk/types.js');
    }>
  | undefined;
const loadServerSdk = () =>
  (serverSdk ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/mcp.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([mcp, streamableHttp, types]) => ({
    McpServer: mcp.McpServer,
    StreamableHTTPServerTransport: streamableHttp.StreamableHTTPServerTransport,
    types,
  })));

const REALM = 'MetatronOS MCP';
const REVOKED = 'the token was revoked';

/**
 * `/mcp`: Metatron's own tools for the owner's other agents, over Streamable
 * HTTP in stateless mode. Every request is checked on its own (Origin, then
 * the bearer, then the token's rate), so a revoked token stops at its next
 * request and its requests in flight are cut; there is no session to outlive
 * it. Each tool call goes through `AiToolRegistry.call` as source `mcp`, which
 * the action policy treats as not the owner: nothing outward ever runs.
 */
@Injectable()
export class McpEndpoint {
  private readonly logger = new Logger('McpEndpoint');

  constructor(
    private readonly tokens: McpTokensService,
    private readonly registry: AiToolRegistry,
    private readonly settings: SettingsService,
    private readonly limiter: McpRateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The Express handler mounted at `/mcp` (before the console's page fallback and outside `/api`). */
  async handle(req: Request, res: Response, next: NextFunction): Promise<void> {
    // Mounted with app.use('/mcp'): only the exact path is ours.
    if (req.path !== '/') {
      next();
      return;
    }
    const origin = decideMcpOrigin(
      {
        origin: req.headers.origin,
        secFetchSite: oneHeader(req.headers['sec-fetch-site']),
        protocol: req.protocol,
        host: req.headers.host,
      },
      {
        allowedHosts: this.config.allowedHosts,
        trustedOrigins: this.config.trustedOrigins,
      },
    );
    if (!origin.allowed) {
      refuse(res, 403, 'Forbidden', origin.message);
      return;
    }
    const bearer = bearerOf(req.headers.authorization);
    if (!bearer) {
      res.setHeader('WWW-Authenticate', `Bearer realm="${REALM}"`);
      refuse(
        res,
        401,
        'Unauthorized',
        'A bearer token is required: create one in Settings → Connected agents and send it as "Authorization: Bearer <token>".',
      );
      return;
    }
    const caller = await this.tokens.authenticate(bearer);
    if (!caller) {
      res.setHeader(
        'WWW-Authenticate',
        `Bearer realm="${REALM}", error="invalid_token", error_description="The token is unknown, expired or was revoked"`,
      );
      refuse(
        res,
        401,
        'Unauthorized',
        'The token is unknown, expired or was revoked.',
      );
      return;
    }
    const waitMs = this.limiter.take(caller.id);
    if (waitMs > 0) {
      res.setHeader('Retry-After', String(Math.ceil(waitMs / 1000)));
      refuse(
        res,
        429,
        'Too Many Requests',
        'Too many requests with this token: wait a moment.',
      );
      return;
    }
    // Stateless: no session to resume or end, no stream of server-sent requests.
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      refuse(
        res,
        405,
        'Method Not Allowed',
        '/mcp is stateless: send each JSON-RPC request with POST.',
      );
      return;
    }
    await this.serve(caller, req, res);
  }

  private async serve(
    caller: McpCaller,
    req: Request,
    res: Response,
  ): Promise<void> {
    const sdk = await loadServerSdk();
    const cancel = new AbortController();
    const server = this.serverFor(sdk, caller, cancel.signal);
    const transport = new sdk.StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    // A revoke stops the call in flight: its result is withheld and the client gets the refusal.
    const untrack = this.tokens.track(caller.id, () => cancel.abort(REVOKED));
    res.on('close', () => {
      untrack();
      cancel.abort();
      void transport.close();
      void server.close();
    });
    void this.tokens.recordUse(caller.id, null);
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      this.logger.warn(
        `MCP request failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      if (!res.headersSent)
        refuse(res, 500, 'Internal Server Error', 'The MCP request failed.');
    }
  }

  /** A server for one request, offering the token's tools. */
  private serverFor(
    { McpServer, types }: Awaited<ReturnType<typeof loadServerSdk>>,
    caller: McpCaller,
    signal: AbortSignal,
  ): McpServer {
    const server = new McpServer(
      { name: 'metatronos', version: APP_VERSION },
      {
        capabilities: { tools: {} },
        instructions:
          "MetatronOS, the owner's personal assistant: read-only tools over the owner's memory, files and calendar. Results are the owner's private data.",
      },
    );
    server.server.setRequestHandler(types.ListToolsRequestSchema, async () => ({
      tools: await this.toolsOf(caller),
    }));
    server.server.setRequestHandler(
      types.CallToolRequestSchema,
      async (request) =>
        this.call(
          caller,
          request.params.name,
          request.params.arguments,
          signal,
        ),
    );
    return server;
  }

  private async toolsOf(caller: McpCaller): Promise<Tool[]> {
    const settings = await this.settings.get();
    const tools: Tool[] = [];
    for (const name of caller.tools) {
      const tool = this.registry.tool(name);
      if (!tool || !isMcpExposable(name)) continue;
      if (!(await this.registry.isUsable(tool, { source: 'mcp', settings })))
        continue;
      const [spec] = this.registry.specsOf([tool]);
      tools.push({
        name,
        description: `${tool.description}${mcpDescriptionNote(name)}`,
        inputSchema: mcpInputSchema(
          name,
          spec.parameters,
        ) as Tool['inputSchema'],
        annotations: { readOnlyHint: true, openWorldHint: false },
      });
    }
    return tools;
  }

  private async call(
    caller: McpCaller,
    name: string,
    args: unknown,
    signal: AbortSignal,
  ): Promise<CallToolResult> {
    const result = await this.run(caller, name, args ?? {}, signal);
    const failed = isToolError(result);
    await this.tokens.recordUse(caller.id, {
      tool: name,
      held: caller.tools.includes(name),
      failed,
    });
    return {
      content: [{ type: 'text', text: result }],
      ...(failed && { isError: true }),
    };
  }

  /** The JSON string the registry answers, or a refusal in the same shape. */
  private async run(
    caller: McpCaller,
    name: string,
    args: unknown,
    signal: AbortSignal,
  ): Promise<string> {
    const tool = this.registry.tool(name);
    if (!tool || !isMcpExposable(name) || !caller.tools.includes(name))
      return toolError(`Tool '${name}' is not available to this agent`);
    // The narrowing is judged on the arguments as the registry will read them.
    const parsed = parseToolArguments(tool.schema, args);
    if (parsed.ok) {
      const problem = mcpCallProblem(name, parsed.args);
      if (problem) return toolError(problem);
    }
    const settings = await this.settings.get();
    const timeoutMs = this.registry.timeoutOf(
      name,
      this.config.llm.toolTimeoutMs,
    );
    const timeout = AbortSignal.timeout(timeoutMs);
    const both = AbortSignal.any([signal, timeout]);
    const stopped = new Promise<string>((resolve) => {
      const done = () =>
        resolve(
          toolError(
            timeout.aborted
              ? `${name} took longer than ${Math.round(timeoutMs / 1000)} s`
              : `${name} was stopped: ${signal.reason === REVOKED ? REVOKED : 'the request ended'}`,
          ),
        );
      if (both.aborted) done();
      else both.addEventListener('abort', done, { once: true });
    });
    const outcome = this.registry
      .call(name, args, {
        source: 'mcp',
        settings,
        chatId: null,
        messageId: null,
        signal: both,
        turn: new ToolTurn({ source: 'mcp', runId: null }),
      })
      .then((o) => o.result);
    return Promise.race([outcome, stopped]);
  }
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or null. */
export function bearerOf(header: string | undefined): string | null {
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match ? match[1] : null;
}

function oneHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

/** An answer in the API's error shape. */
function refuse(
  res: Response,
  status: number,
  error: string,
  message: string,
): void {
  res.status(status).json({ statusCode: status, message, error });
}

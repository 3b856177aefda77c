import {
  BadRequestException,
  Injectable,
  NotFoundException,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Model } from 'mongoose';
import {
  MCP_TOKEN_NAME_MAX_LENGTH,
  MCP_TOKENS_MAX,
  MCP_TOOL_CHOICES,
  type CreateMcpTokenRequest,
  type McpTokenCreated,
  type McpTokenList,
  type McpTokenView,
} from '@metatronos/shared-types';
import { AiToolRegistry } from '../ai-tools/ai-tool-registry';
import { Clock } from '../clock/clock';
import {
  MCP_DEFAULT_TOOLS,
  MCP_EXPOSABLE_TOOLS,
  isMcpExposable,
} from './mcp-exposure';
import { McpTokenRecord } from './schemas/mcp-token.schema';

export const MCP_TOKEN_NOT_FOUND = 'MCP token not found';

/** `mtr_mcp_<24 hex id>_<43 base64url secret>`: the prefix lets secret scanners spot a leaked one. */
const TOKEN_PATTERN = /^mtr_mcp_([0-9a-f]{24})_([A-Za-z0-9_-]{43})$/;

/** A token that passed the check, as `/mcp` uses it for one request. */
export interface McpCaller {
  id: string;
  name: string;
  tools: string[];
}

/** What one tool call came to, for the token's counters. */
export interface McpCallRecord {
  tool: string;
  /** The token holds the tool (a call of any other name is only counted as a failure). */
  held: boolean;
  failed: boolean;
}

/**
 * The owner's tokens for `/mcp`: create (shown once), list, revoke, check a
 * bearer, count calls. A revoke also cuts the token's requests in flight.
 */
@Injectable()
export class McpTokensService {
  /** Requests in flight per token, so a revoke ends them at once. */
  private readonly inFlight = new Map<string, Set<() => void>>();
  /** Counter writes per token, one after the other (FerretDB's updates are not atomic under concurrency). */
  private readonly writes = new Map<string, Promise<void>>();

  constructor(
    @InjectModel(McpTokenRecord.name)
    private readonly model: Model<McpTokenRecord>,
    private readonly registry: AiToolRegistry,
    private readonly clock: Clock,
  ) {}

  async list(): Promise<McpTokenList> {
    const records = await this.model.find().lean().exec();
    records.sort((a, b) => +b.createdAt - +a.createdAt);
    return {
      tokens: records.map(view),
      choices: MCP_TOOL_CHOICES.map((c) => ({ ...c })),
    };
  }

  async create(request: CreateMcpTokenRequest): Promise<McpTokenCreated> {
    const name = request.name.trim();
    if (!name) throw new BadRequestException('name must not be empty');
    if (/[\p{Cc}\p{Cf}]/u.test(name))
      throw new BadRequestException('name must not contain control characters');
    const tools = this.checkTools(request.tools);
    if ((await this.model.countDocuments().exec()) >= MCP_TOKENS_MAX)
      throw new BadRequestException(
        `At most ${MCP_TOKENS_MAX} MCP tokens: revoke one you no longer use first`,
      );
    const id = randomBytes(12).toString('hex');
    const secret = randomBytes(32).toString('base64url');
    await this.model.create({
      _id: id,
      name: name.slice(0, MCP_TOKEN_NAME_MAX_LENGTH),
      secretHash: sha256(secret),
      tools,
      createdAt: this.clock.now(),
      lastUsedAt: null,
      calls: 0,
      failedCalls: 0,
      callsByTool: {},
    });
    return { id, token: `mtr_mcp_${id}_${secret}`, name, tools };
  }

  async revoke(id: string): Promise<void> {
    const { deletedCount } = await this.model.deleteOne({ _id: id }).exec();
    // Requests already past the check stop now, whether or not the row was still there.
    for (const cut of this.inFlight.get(id) ?? []) cut();
    this.inFlight.delete(id);
    if (!deletedCount) throw new NotFoundException(MCP_TOKEN_NOT_FOUND);
  }

  /** The token's holder, or null for anything that is not a live token. */
  async authenticate(token: string): Promise<McpCaller | null> {
    const match = TOKEN_PATTERN.exec(token);
    if (!match) return null;
    const [, id, secret] = match;
    const record = await this.model.findById(id).lean().exec();
    if (!record) return null;
    const expected = Buffer.from(record.secretHash, 'hex');
    const given = Buffer.from(sha256(secret), 'hex');
    if (expected.length !== given.length || !timingSafeEqual(expected, given))
      return null;
    return { id, name: record.name, tools: [...record.tools] };
  }

  /**
   * Registers a request in flight; `cut` runs if the token is revoked meanwhile.
   * Returns the function that unregisters it.
   */
  track(id: string, cut: () => void): () => void {
    let set = this.inFlight.get(id);
    if (!set) this.inFlight.set(id, (set = new Set()));
    set.add(cut);
    return () => {
      set.delete(cut);
      if (set.size === 0 && this.inFlight.get(id) === set)
        this.inFlight.delete(id);
    };
  }

  /** Notes a request (and the tool call it made, if any) against the token. */
  recordUse(id: string, call: McpCallRecord | null): Promise<void> {
    const update: Record<string, unknown> = {
      $set: { lastUsedAt: this.clock.now() },
    };
    if (call) {
      const inc: Record<string, number> = { calls: 1 };
      if (call.failed) inc['failedCalls'] = 1;
      // Only the token's own (exposable) tools become keys: a client cannot write arbitrary field paths.
      if (call.held && isMcpExposable(call.tool))
        inc[`callsByTool.${call.tool}`] = 1;
      update['$inc'] = inc;
    }
    const previous = this.writes.get(id) ?? Promise.resolve();
    const next = previous
      .then(() => this.model.updateOne({ _id: id }, update).exec())
      .then(
        () => undefined,
        () => undefined,
      );
    this.writes.set(id, next);
    void next.then(() => {
      if (this.writes.get(id) === next) this.writes.delete(id);
    });
    return next;
  }

  /** The token's tools: one name or a list; omitted, the defaults; every name known and exposable. */
  private checkTools(tools: string | string[] | undefined): string[] {
    if (tools === undefined) return [...MCP_DEFAULT_TOOLS];
    const names = [
      ...new Set((Array.isArray(tools) ? tools : [tools]).map((t) => t.trim())),
    ];
    if (names.length === 0)
      throw new BadRequestException(
        `tools must name at least one tool (any of: ${MCP_EXPOSABLE_TOOLS.join(', ')})`,
      );
    for (const name of names) {
      if (!this.registry.tool(name))
        throw new BadRequestException(
          `Unknown tool "${name.slice(0, 64)}" (a token may hold: ${MCP_EXPOSABLE_TOOLS.join(', ')})`,
        );
      if (!isMcpExposable(name))
        throw new BadRequestException(
          `${name} is never offered over MCP (a token may hold: ${MCP_EXPOSABLE_TOOLS.join(', ')})`,
        );
    }
    return MCP_EXPOSABLE_TOOLS.filter((t) => names.includes(t));
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function view(record: McpTokenRecord): McpTokenView {
  return {
    id: record._id,
    name: record.name,
    tools: [...record.tools],
    createdAt: record.createdAt.toISOString(),
    lastUsedAt: record.lastUsedAt ? record.lastUsedAt.toISOString() : null,
    calls: record.calls ?? 0,
    errors: record.failedCalls ?? 0,
    callsByTool: { ...(record.callsByTool ?? {}) },
  };
}

import {
  BadRequestException,
  Injectable,
  NotFoundException,
} from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Model } from 'mongoose';
import {
  MCP_TOKEN_MAX_DAYS,
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

const DAY_MS = 24 * 60 * 60_000;

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
    const now = this.clock.now();
    return {
      tokens: records.map((record) => view(record, now)),
      choices: MCP_TOOL_CHOICES.map((c) => ({ ...c })),
    };
  }

  async create(request: CreateMcpTokenRequest): Promise<McpTokenCreated> {
    const name = request.name.trim();
    if (!name) throw new BadRequestException('name must not be empty');
    if (/[\p{Cc}\p{Cf}]/u.test(name))
      throw new BadRequestException('name must not contain control characters');
    const tools = this.checkTools(request.tools);
    const expiresAt = this.expiryOf(request);
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
      expiresAt,
      calls: 0,
      failedCalls: 0,
      callsByTool: {},
    });
    return {
      id,
      token: `mtr_mcp_${id}_${secret}`,
      name,
      tools,
      expiresAt: expiresAt ? expiresAt.toISOString() : null,
    };
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
    if (
      record.expiresAt &&
      new Date(record.expiresAt).getTime() <= this.clock.now().getTime()
    )
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

  /** `expiresInDays` (number or numeric string) or `expiresAt` (ISO, future), not both; null: never. */
  private expiryOf(request: CreateMcpTokenRequest): Date | null {
    const days = request.expiresInDays;
    const at = request.expiresAt;
    const hasDays = days !== undefined && days !== null;
    const hasAt = at !== undefined && at !== null;
    if (hasDays && hasAt)
      throw new BadRequestException(
        'Give expiresInDays or expiresAt, not both',
      );
    const now = this.clock.now().getTime();
    const latest = now + MCP_TOKEN_MAX_DAYS * DAY_MS;
    if (hasDays) {
      const n =
        typeof days === 'number'
          ? days
          : typeof days === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(days)
            ? Number(days)
            : NaN;
      if (!Number.isFinite(n) || n <= 0 || n > MCP_TOKEN_MAX_DAYS)
        throw new BadRequestException(
          `expiresInDays must be a positive number of days, at most ${MCP_TOKEN_MAX_DAYS} (like 30), or null for never`,
        );
      return new Date(now + n * DAY_MS);
    }
    if (hasAt) {
      const when =
        typeof at === 'string' && /^\d{4}-\d{2}-\d{2}/.test(at)
          ? Date.parse(at)
          : NaN;
      if (!Number.isFinite(when))
        throw new BadRequestException(
          'expiresAt must be an ISO date, like 2027-01-31 or 2027-01-31T12:00:00Z',
        );
      if (when <= now)
        throw new BadRequestException('expiresAt must be in the future');
      if (when > latest)
        throw new BadRequestException(
          `expiresAt must be within ${MCP_TOKEN_MAX_DAYS} days`,
        );
      return new Date(when);
    }
    return null;
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

function view(record: McpTokenRecord, now: Date): McpTokenView {
  const expiresAt = record.expiresAt ? new Date(record.expiresAt) : null;
  return {
    id: record._id,
    name: record.name,
    tools: [...record.tools],
    createdAt: record.createdAt.toISOString(),
    expiresAt: expiresAt ? expiresAt.toISOString() : null,
    expired: expiresAt !== null && expiresAt.getTime() <= now.getTime(),
    lastUsedAt: record.lastUsedAt ? record.lastUsedAt.toISOString() : null,
    calls: record.calls ?? 0,
    errors: record.failedCalls ?? 0,
    callsByTool: { ...(record.callsByTool ?? {}) },
  };
}

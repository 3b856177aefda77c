import {
  Injectable,
  Logger,
  Optional,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { randomUUID } from 'node:crypto';
import type {
  ActionEffect,
  ActionReason,
  PendingToolResult,
  TaintMark,
} from '@metatronos/shared-types';
import {
  decideToolCall,
  isUnattended,
  type ActionDecision,
} from '../actions/action-policy';
import { contactScopeProblem } from '../actions/contact-scope';
import { RunSendCounter } from '../actions/run-send-counter';
import { ToolTurn } from '../actions/tool-turn';
import { Clock, SystemClock } from '../clock/clock';
import type { LlmToolSpec } from '../llm/llm-adapter';
import {
  AiModeProvider,
  AiToolProvider,
  DEFAULT_MODE,
  META_MODE,
  toolError,
  type AiMode,
  type AiTool,
  type AiToolAvailabilityContext,
  type AiToolContext,
  type AiToolSource,
} from './ai-tool';
import { parseToolArguments, toolParameters } from './tool-argument-schema';

const TOOL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,63}$/;
const MODE_NAME = /^[a-z][a-z0-9_]{0,31}$/;

/** Issue 13's caps, meta tools included: a small tool set per request. */
export const MAX_TOOLS_PER_MODE = 8;
export const MAX_TOOLS_IN_DEFAULT_MODE = 6;

/** A mode with the names of the tools it loads (meta tools not repeated). */
export interface ModeTools {
  mode: AiMode;
  tools: AiTool[];
}

/** What a turn offers: the meta tools, the mode's tools, minus those unavailable, disabled or filtered out. */
export interface ToolSelection {
  mode: string;
  /** The caller's narrower profile (an auto-reply's); `null`: none. */
  filter?: ((name: string) => boolean) | null;
}

/** One call's answer and what the action policy made of it. */
export interface ToolCallOutcome {
  /** The JSON string the model receives. */
  result: string;
  /** The call's result marked the turn as having read third-party content. */
  taint: TaintMark | null;
  /** The call did not run: it waits for the owner as this pending action. */
  pendingActionId: string | null;
}

/** A call the policy holds for the owner, as the pending-action store receives it. */
export interface HeldCall {
  tool: string;
  arguments: Record<string, unknown>;
  summary: string;
  effect: ActionEffect;
  reason: ActionReason;
  context: AiToolContext;
  turn: ToolTurn;
}

/** Where held calls go (the actions feature registers itself: it needs the registry to approve). */
export interface PendingActionGate {
  hold(call: HeldCall): Promise<{ id: string }>;
}

/** Every tool contributed by a feature module, found at start-up. */
@Injectable()
export class AiToolRegistry implements OnModuleInit {
  private readonly logger = new Logger(AiToolRegistry.name);
  private readonly tools = new Map<string, AiTool>();
  /** What each provider is told about a tool, generated once from its schema. */
  private readonly toolSpecs = new Map<string, LlmToolSpec>();
  private readonly modeList = new Map<string, AiMode>();
  /** One per-run count of sends, whatever the tool. */
  private readonly sends = new RunSendCounter();
  private gate: PendingActionGate | null = null;
  private readonly sources: AiToolSource[] = [];
  /** Specs of source tools, made again when the tool object changes. */
  private readonly sourceSpecs = new WeakMap<AiTool, LlmToolSpec>();
  /** `modes()` as last sorted, with the sources' modes it was sorted with (read several times a turn). */
  private sortedModes: { fromSources: AiMode[]; modes: AiMode[] } | null = null;
  /** `modeTools()` as last made, with the modes and tools it was made of. */
  private lastModeTools: {
    modes: readonly AiMode[];
    all: AiTool[];
    list: ModeTools[];
  } | null = null;
  private readonly clock: Clock;

  constructor(
    private readonly discovery: DiscoveryService,
    @Optional() clock?: Clock,
  ) {
    this.clock = clock ?? new SystemClock();
  }

  /** Called once at start-up by the actions feature. */
  useGate(gate: PendingActionGate): void {
    this.gate = gate;
  }

  /** Called once at start-up by a feature whose tools come and go (MCP). */
  useToolSource(source: AiToolSource): void {
    this.sources.push(source);
  }

  /** Every tool: the registered ones, then the sources' (a source tool never shadows a registered name). */
  private all(): AiTool[] {
    const tools = [...this.tools.values()];
    for (const source of this.sources)
      for (const tool of source.tools())
        if (!this.tools.has(tool.name) && TOOL_NAME.test(tool.name))
          tools.push(tool);
    return tools;
  }

  private lookup(name: string): AiTool | undefined {
    const registered = this.tools.get(name);
    if (registered) return registered;
    for (const source of this.sources) {
      const found = source.tools().find((t) => t.name === name);
      if (found) return found;
    }
    return undefined;
  }

  private specOf(tool: AiTool): LlmToolSpec {
    if (this.tools.get(tool.name) === tool) {
      const registered = this.toolSpecs.get(tool.name);
      // set_mode's description lists the modes, which change with the MCP servers.
      if (registered?.description === tool.description) return registered;
      const fresh: LlmToolSpec = {
        name: tool.name,
        description: tool.description,
        parameters: toolParameters(tool.name, tool.schema),
      };
      this.toolSpecs.set(tool.name, fresh);
      return fresh;
    }
    let spec = this.sourceSpecs.get(tool);
    if (!spec) {
      spec = {
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters ?? toolParameters(tool.name, tool.schema),
      };
      this.sourceSpecs.set(tool, spec);
    }
    return spec;
  }

  /** Tools a mode may hold besides the meta tools (what a source's mode must stay within). */
  roomPerMode(): number {
    const meta = [...this.tools.values()].filter((t) =>
      t.modes?.includes(META_MODE),
    ).length;
    return MAX_TOOLS_PER_MODE - meta;
  }

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders({
      metadataKey: AiToolProvider.KEY,
    })) {
      const tool = wrapper.instance as AiTool | undefined;
      if (!tool?.schema) continue;
      const { name, description } = tool;
      if (!TOOL_NAME.test(name))
        throw new Error(`Tool name '${name}' is not a valid function name`);
      if (this.tools.has(name))
        throw new Error(`Two tools are named '${name}'`);
      this.tools.set(name, tool);
      this.toolSpecs.set(name, {
        name,
        description,
        parameters: toolParameters(name, tool.schema),
      });
    }
    const modes = this.discovery
      .getProviders({ metadataKey: AiModeProvider.KEY })
      .map((wrapper) => wrapper.instance as AiMode | undefined)
      .filter((m): m is AiMode => typeof m?.name === 'string');
    checkModes(modes, [...this.tools.values()]);
    for (const mode of modes) this.modeList.set(mode.name, mode);
    this.sortedModes = null;
    this.logger.debug(`Tools: ${[...this.tools.keys()].join(', ')}`);
  }

  /**
   * The registered modes, the default first, then by name. The same array (not to be changed)
   * while the modes stay the same, so a caller may keep what it derived from it.
   */
  modes(): readonly AiMode[] {
    const fromSources = this.sources
      .flatMap((source) => source.modes())
      .filter((m) => !this.modeList.has(m.name) && MODE_NAME.test(m.name));
    const last = this.sortedModes;
    if (last && sameModes(last.fromSources, fromSources)) return last.modes;
    const modes = [...this.modeList.values(), ...fromSources].sort(
      (a, b) =>
        Number(b.name === DEFAULT_MODE) - Number(a.name === DEFAULT_MODE) ||
        a.name.localeCompare(b.name),
    );
    this.sortedModes = { fromSources, modes };
    return modes;
  }

  hasMode(name: string): boolean {
    // Asked several times a turn: no list built and sorted for a yes or no.
    return (
      this.modeList.has(name) ||
      (MODE_NAME.test(name) &&
        this.sources.some((source) =>
          source.modes().some((m) => m.name === name),
        ))
    );
  }

  /**
   * Each mode with its own tools (registration order), meta tools left out. The same list (not to
   * be changed) while the modes and tools stay the same: every owner turn's prompt reads it.
   */
  modeTools(): readonly ModeTools[] {
    const all = this.all();
    const modes = this.modes();
    const last = this.lastModeTools;
    if (
      last?.modes === modes &&
      last.all.length === all.length &&
      last.all.every((t, i) => t === all[i])
    )
      return last.list;
    const list = modes.map((mode) => ({
      mode,
      tools: all.filter((t) => t.modes?.includes(mode.name)),
    }));
    this.lastModeTools = { modes, all, list };
    return list;
  }

  /** The modes that hold the tool `name` (none for a meta tool or an unknown name). */
  modesOf(name: string): string[] {
    const tool = this.lookup(name);
    if (!tool?.modes || tool.modes.includes(META_MODE)) return [];
    return this.modes()
      .map((m) => m.name)
      .filter((m) => tool.modes?.includes(m));
  }

  isMetaTool(name: string): boolean {
    return this.tools.get(name)?.modes?.includes(META_MODE) ?? false;
  }

  /** The tool, when one is registered (or a source holds one) under `name`. */
  tool(name: string): AiTool | undefined {
    return this.lookup(name);
  }

  /** Whether the tool is offered in this context at all (availability and the owner's switch), whatever the mode. */
  async isUsable(
    tool: AiTool,
    context: AiToolAvailabilityContext,
  ): Promise<boolean> {
    return await this.usable(tool, context);
  }

  /** `isUsable` without a promise when the tool answers at once (most do: no async step per tool and turn). */
  private usable(
    tool: AiTool,
    context: AiToolAvailabilityContext,
  ): boolean | Promise<boolean> {
    if (context.settings.disabledTools?.includes(tool.name)) return false;
    return tool.isAvailable?.(context) ?? true;
  }

  /** Those of `tools` offered in this context (availability asked of each at once, order kept). */
  private async usableOf(
    tools: readonly AiTool[],
    context: AiToolAvailabilityContext,
  ): Promise<AiTool[]> {
    const checks: Array<boolean | Promise<boolean>> = [];
    const waiting: Array<Promise<void>> = [];
    for (const tool of tools) {
      // offeredTo() and usable() without a promise per tool.
      const check = offeredTo(tool, context) && this.usable(tool, context);
      const at = checks.push(check) - 1;
      // Only the tools that answer later are awaited (all at once, as before).
      if (typeof check !== 'boolean')
        waiting.push(
          Promise.resolve(check).then((ok) => {
            checks[at] = ok;
          }),
        );
    }
    if (waiting.length) await Promise.all(waiting);
    return tools.filter((_, i) => !!checks[i]);
  }

  /** The tools a request of this mode offers: the meta tools first, then the mode's, each usable and allowed by the filter. */
  async toolsFor(
    context: AiToolAvailabilityContext,
    selection: ToolSelection,
  ): Promise<AiTool[]> {
    const { filter } = selection;
    const ordered = this.modeSelection(this.all(), selection.mode);
    return this.usableOf(
      filter ? ordered.filter((t) => filter(t.name)) : ordered,
      context,
    );
  }

  /**
   * Of `tools`, the meta tools, then the mode's own (those loaded on demand left out), in the order
   * given. From `available(context)` already at hand it answers what `toolsFor(context, { mode })`
   * does (a turn lists every usable tool in its prompt too: their availability is asked once).
   */
  modeSelection(tools: readonly AiTool[], mode: string): AiTool[] {
    const meta: AiTool[] = [];
    const own: AiTool[] = [];
    for (const t of tools)
      if (t.modes?.includes(META_MODE)) meta.push(t);
      else if (t.modes?.includes(mode) && !t.onDemand) own.push(t);
    return meta.concat(own);
  }

  /** The provider specs of `tools`. */
  specsOf(tools: readonly AiTool[]): LlmToolSpec[] {
    return tools.map((t) => this.specOf(t));
  }

  /** The time limit of one call of `name`: the tool's own, or `fallback`. */
  timeoutOf(name: string, fallback: number): number {
    return this.lookup(name)?.timeoutMs ?? fallback;
  }

  names(): string[] {
    return this.all().map((t) => t.name);
  }

  /** The tools offered in this context, in registration order. */
  available(context: AiToolAvailabilityContext): Promise<AiTool[]> {
    return this.usableOf(this.all(), context);
  }

  async specs(context: AiToolAvailabilityContext): Promise<LlmToolSpec[]> {
    return (await this.available(context)).map((t) => this.specOf(t));
  }

  /**
   * Runs one call and always answers with a JSON string: an unknown or
   * unavailable tool, arguments its schema refuses (nothing runs) or a thrown
   * error become `{"error": "..."}`.
   */
  async execute(
    name: string,
    args: unknown,
    context: AiToolContext,
  ): Promise<string> {
    return (await this.call(name, args, context)).result;
  }

  /**
   * The one chokepoint of every tool call (the LLM runner, voice, an approved pending
   * action): checks the arguments, asks the action policy (run, wait for the owner,
   * refuse), keeps contacts apart, counts the run's sends, runs the tool, and marks
   * the turn when the result is third-party content.
   */
  async call(
    name: string,
    args: unknown,
    context: AiToolContext,
  ): Promise<ToolCallOutcome> {
    const answer = (result: string): ToolCallOutcome => ({
      result,
      taint: null,
      pendingActionId: null,
    });
    const tool = this.lookup(name);
    if (!tool || !(await this.usable(tool, context)))
      return answer(toolError(`Unknown or unavailable tool '${name}'`));
    const checked = parseToolArguments(tool.schema, args);
    if (!checked.ok) return answer(toolError(checked.error));
    const turn =
      context.turn ??
      new ToolTurn({ source: context.source, runId: context.messageId });
    let decision: ActionDecision = { kind: 'run' };
    let release: (() => void) | null = null;
    if (!context.ownerApproved) {
      const apart = contactScopeProblem(tool, checked.args, turn);
      if (apart) return answer(toolError(apart));
      const effect = effectOf(tool, checked.args, turn);
      const runKey = turn.runId ?? turnKey(turn);
      decision = decideToolCall({
        tool: name,
        effect,
        source: turn.source,
        taint: turn.taint,
        alwaysConfirm: context.settings.alwaysConfirm === true,
        actOnOwnTools: turn.actOnOwnTools,
        sendsSoFar: this.sends.used(runKey),
        queuesUnattendedSends: tool.queuesUnattendedSends,
      });
      if (decision.kind === 'refuse') return answer(toolError(decision.reason));
      const counted = effect === 'send' && isUnattended(turn.source);
      if (counted) release = this.sends.reserve(runKey, Infinity);
      if (decision.kind === 'pending' && effect) {
        if (!this.gate) {
          release?.();
          return answer(
            toolError(
              `${name} needs the owner's approval here, and no approval queue is running`,
            ),
          );
        }
        const summary = summaryOf(tool, checked.args);
        try {
          const held = await this.gate.hold({
            tool: name,
            arguments: checked.args as Record<string, unknown>,
            summary,
            effect,
            reason: decision.reason,
            context,
            turn,
          });
          const pending: PendingToolResult = {
            pending: true,
            actionId: held.id,
            summary,
          };
          return {
            result: JSON.stringify({
              ...pending,
              note: `Not done yet: it waits for the owner's approval in the console (${decision.reason.text}). Tell the owner; do not try again.`,
            }),
            taint: null,
            pendingActionId: held.id,
          };
        } catch (error) {
          release?.();
          const message =
            error instanceof Error ? error.message : String(error);
          this.logger.warn(`Could not hold a call of ${name}: ${message}`);
          return answer(toolError(`Could not queue ${name} for approval`));
        }
      }
    }
    let result: string;
    try {
      const raw = await tool.execute(checked.args, {
        ...context,
        turn,
        ownerApproved:
          context.ownerApproved === true ||
          (decision.kind === 'run' && decision.onOwn === true),
      });
      result = typeof raw === 'string' ? raw : JSON.stringify(raw);
    } catch (error) {
      release?.();
      const message = error instanceof Error ? error.message : String(error);
      this.logger.warn(`Tool ${name} failed: ${message}`);
      return answer(toolError(message));
    }
    // A send that failed does not use up the run's allowance.
    if (isToolError(result)) {
      release?.();
      return answer(result);
    }
    const found = tool.taint?.(checked.args, result, turn) ?? null;
    if (!found) return answer(result);
    const mark: TaintMark = {
      by: name,
      text: found.text,
      at: this.clock.now().toISOString(),
    };
    turn.addTaint(mark);
    return { result, taint: mark, pendingActionId: null };
  }
}

/** The same modes, in the same order, with the same descriptions (a source builds new objects each time). */
function sameModes(a: readonly AiMode[], b: readonly AiMode[]): boolean {
  return (
    a.length === b.length &&
    a.every(
      (m, i) => m.name === b[i].name && m.description === b[i].description,
    )
  );
}

/** Tools that grant or change permissions are never offered to an unattended turn. */
function offeredTo(tool: AiTool, context: AiToolAvailabilityContext): boolean {
  return !(tool.grantsAccess && isUnattended(context.source));
}

function effectOf(
  tool: AiTool,
  args: unknown,
  turn: ToolTurn,
): ActionEffect | null {
  if (tool.grantsAccess) return 'grant';
  return tool.effect?.(args as never, turn) ?? null;
}

const SUMMARY_MAX = 2000;

function summaryOf(tool: AiTool, args: unknown): string {
  const own = tool.summarize?.(args as never);
  const text = own?.trim() || `${tool.name} ${JSON.stringify(args)}`;
  return text.length > SUMMARY_MAX
    ? `${text.slice(0, SUMMARY_MAX - 1)}…`
    : text;
}

const turnKeys = new WeakMap<ToolTurn, string>();

/** A turn with no run id (a direct call) counts its sends under a key of its own. */
function turnKey(turn: ToolTurn): string {
  let key = turnKeys.get(turn);
  if (!key) {
    key = `turn:${randomUUID()}`;
    turnKeys.set(turn, key);
  }
  return key;
}

export function isToolError(result: string): boolean {
  if (!result.startsWith('{"error"')) return false;
  try {
    const parsed = JSON.parse(result) as { error?: unknown };
    return typeof parsed.error === 'string';
  } catch {
    return false;
  }
}

/**
 * The boot-time check of the modes and the tools that name them: valid, unique mode
 * names, the default mode present, every tool in at least one known mode, and the
 * caps on tools per mode (meta tools counted in every mode).
 */
export function checkModes(
  modes: readonly AiMode[],
  tools: readonly AiTool[],
): void {
  const names = new Set<string>();
  for (const mode of modes) {
    if (!MODE_NAME.test(mode.name))
      throw new Error(
        `Mode name '${mode.name}' is not valid (lower-case letters, digits and _)`,
      );
    if (names.has(mode.name))
      throw new Error(`Two modes are named '${mode.name}'`);
    if (!mode.description?.trim() || mode.description.includes('\n'))
      throw new Error(`Mode '${mode.name}' needs a one-line description`);
    names.add(mode.name);
  }
  if (tools.length > 0 && !names.has(DEFAULT_MODE))
    throw new Error(`No '${DEFAULT_MODE}' mode is registered`);
  const meta = tools.filter((t) => t.modes?.includes(META_MODE)).length;
  for (const tool of tools) {
    if (!tool.modes?.length)
      throw new Error(`Tool '${tool.name}' names no mode (set its 'modes')`);
    for (const mode of tool.modes)
      if (mode !== META_MODE && !names.has(mode))
        throw new Error(`Tool '${tool.name}' names an unknown mode '${mode}'`);
  }
  for (const name of names) {
    const count =
      meta +
      tools.filter(
        (t) => !t.modes?.includes(META_MODE) && t.modes?.includes(name),
      ).length;
    const cap =
      name === DEFAULT_MODE ? MAX_TOOLS_IN_DEFAULT_MODE : MAX_TOOLS_PER_MODE;
    if (count > cap)
      throw new Error(
        `Mode '${name}' has ${count} tools (meta tools included); the limit is ${cap}`,
      );
  }
}

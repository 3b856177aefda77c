import { DiscoveryService } from '@nestjs/core';
import type { z } from 'zod';
import type { ActionEffect } from '@metatronos/shared-types';
import type { ContactScope, ToolTurn } from '../actions/tool-turn';
import type { JsonSchemaObject } from '../llm/llm-adapter';
import type { TurnSource } from '../llm/turn-source';
import type { AppSettings } from '../settings/settings.service';

/** What decides whether a tool is offered in this turn. */
export interface AiToolAvailabilityContext {
  source: TurnSource;
  settings: AppSettings;
}

/**
 * The conversation's mode and selected account as one turn sees them. The runner
 * hands it to the meta tools: a change takes effect on the turn's next model
 * request and is stored with the chat.
 */
export interface ConversationModeControl {
  readonly mode: string;
  readonly accountId: string | null;
  setMode(mode: string): Promise<void>;
  selectAccount(accountId: string): Promise<void>;
  /** Offers these tools (of the current mode, loaded on demand) from the turn's next model request on. */
  loadTools?(names: readonly string[]): Promise<void>;
}

/** What a tool knows about the turn that called it. */
export interface AiToolContext extends AiToolAvailabilityContext {
  /** The conversation's mode state; absent outside a turn (unit tests, the Tools page). */
  conversation?: ConversationModeControl;
  chatId: string | null;
  /** The assistant message being written (tools that create media link to it). */
  messageId: string | null;
  /** Aborted by Stop, the turn timeout or the tool timeout: long work should stop. */
  signal: AbortSignal;
  /**
   * The turn as the action policy sees it (taint, sends, the job's consent). The runner
   * makes one per turn; omitted, the registry makes a fresh one from `source`.
   */
  turn?: ToolTurn;
  /**
   * Set by the registry when the owner approved this very call (a pending action) or
   * allowed the tool for the job: a tool with its own approval queue (email drafts) acts.
   */
  ownerApproved?: boolean;
  /** The owner allowed this reply over the spend caps: a tool's own model call (an image) may pass them too. */
  allowOverBudget?: boolean;
}

/** What a tool result brought into the turn, in the owner's words ("a web page from example.org"). */
export interface ToolTaint {
  text: string;
}

/** A tool's arguments: always an object at the top (every provider's function-calling format needs one). */
export type AiToolSchema = z.ZodObject;

/**
 * A tool the model can call. Feature modules contribute tools by marking a
 * provider with `@AiToolProvider()`; the registry finds them, so adding a tool
 * never edits the registry.
 *
 * The arguments are declared once, as a zod schema: the registry generates the
 * JSON Schema the provider sees from it and validates each call with it, so
 * `execute` receives arguments of the schema's type.
 */
export interface AiTool<Schema extends AiToolSchema = AiToolSchema> {
  /** The function name the model calls (letters, digits, `_`). */
  readonly name: string;
  /** What the model reads about the tool (sent with every turn: keep it short). */
  readonly description: string;
  /** The arguments; `.describe()` on a field becomes its description for the model. */
  readonly schema: Schema;
  /** One line for the prompt's "Available Tools" section (without the name). */
  readonly promptLine: string;
  /** How long one call may run; omitted: `LLM_TOOL_TIMEOUT_MS`. Slow tools (image generation) set their own. */
  readonly timeoutMs?: number;
  /**
   * The modes that load this tool (see `AiMode`); `META_MODE` marks a tool offered in
   * every mode (`set_mode`, `select_account`). Capability gating offers a turn only the
   * tools of the conversation's current mode.
   */
  readonly modes?: readonly string[];
  /**
   * The JSON Schema the provider sees, when it is not generated from `schema`: a tool
   * that comes with its own (an MCP server's, made portable) sets it; `schema` still checks each call.
   */
  readonly parameters?: JsonSchemaObject;
  /**
   * Held by its mode but not offered by it until a turn loads it (an MCP server with
   * more tools than a mode may hold: `<server>_find_tools` loads the few that match).
   */
  readonly onDemand?: boolean;
  /** Omitted: always available (when tools are on at all). */
  isAvailable?(context: AiToolAvailabilityContext): boolean | Promise<boolean>;
  /**
   * Why the tool is not available on this machine or with these settings, in plain
   * words for the Tools page (e.g. "bubblewrap is not installed"); `null` when it is.
   */
  unavailableReason?(
    context: AiToolAvailabilityContext,
  ): string | null | Promise<string | null>;
  /**
   * Runs with arguments that passed `schema`. Returns the JSON string the
   * model receives; throwing is allowed and becomes `{"error": message}`.
   */
  execute(args: z.output<Schema>, context: AiToolContext): Promise<string>;
  /**
   * What the call does outward, for the action policy (apps/api/src/actions): `send`
   * to a person, `grant` permissions, `delete`, `move`, `schedule` jobs, write `memory`,
   * or an outward `fetch`; null (or no method): nothing the policy holds back.
   */
  effect?(args: z.output<Schema>, turn: ToolTurn): ActionEffect | null;
  /** Exactly what the call would do, for a pending action ("WhatsApp to +1555…: «text»"). */
  summarize?(args: z.output<Schema>): string;
  /**
   * Third-party content in a successful result (a web page, an email, a contact's
   * message): the turn is marked for the rest of it. Null: the result is the owner's own data.
   */
  taint?(
    args: z.output<Schema>,
    result: string,
    turn: ToolTurn,
  ): ToolTaint | null;
  /**
   * The contact chats the call acts in (send, react, read), for keeping contacts apart:
   * in a contact's auto-reply turn, a call naming any other chat is refused. `all` means
   * every contact (a read without a filter). Tools of the messaging channels must have it.
   */
  contactTargets?(args: z.output<Schema>): ContactScope[] | 'all';
  /** The tool grants or changes permissions: never offered to an unattended turn, and waits after third-party content. */
  readonly grantsAccess?: boolean;
  /** The tool keeps an unattended send in its own approval queue (email drafts) instead of a pending action. */
  readonly queuesUnattendedSends?: boolean;
}

export const AiToolProvider = DiscoveryService.createDecorator<void>();

/** The seed's tool answer for a refusal or failure. */
export function toolError(message: string): string {
  return JSON.stringify({ error: message });
}

/** Marks a tool that every mode offers (the meta tools). */
export const META_MODE = '*';

/** The mode a new conversation starts in: memory and the everyday tools. */
export const DEFAULT_MODE = 'default';

/**
 * A mode: a named set of tools the model loads with `set_mode`. Feature modules
 * contribute their modes by marking a provider with `@AiModeProvider()`, the way
 * they contribute tools; a tool joins a mode by listing its name in `modes`.
 */
export interface AiMode {
  /** Lower-case letters, digits and `_`: the value of `set_mode({ mode })`. */
  readonly name: string;
  /** One short line for the model's mode list and the console. */
  readonly description: string;
  /** An account kind this mode works on (`email`, `calendar`): `select_account` picks one. */
  readonly accountKind?: string;
  /** How fast Metatron speaks in a voice call in this mode (the provider's speed, 1 normal); omitted: 1. */
  readonly speechSpeed?: number;
}

export const AiModeProvider = DiscoveryService.createDecorator<void>();

/**
 * Tools and modes that come and go while the app runs (the owner's MCP servers): the
 * registry asks on every lookup, so a source only keeps its lists current. Its tools
 * run through the same `AiToolRegistry.call` as every other.
 */
export interface AiToolSource {
  tools(): readonly AiTool[];
  modes(): readonly AiMode[];
}

/** An account a mode works on (an email or calendar account), as `select_account` lists it. */
export interface AiAccount {
  id: string;
  kind: string;
  name: string;
  address: string;
}

/**
 * Where the accounts come from (the accounts feature provides it under
 * `AI_ACCOUNT_DIRECTORY`: AccountsModule); with no account stored,
 * `select_account` is not offered.
 */
export interface AiAccountDirectory {
  /** The accounts of `kind`, or of every kind when omitted. */
  list(kind?: string): Promise<AiAccount[]>;
}

export const AI_ACCOUNT_DIRECTORY = Symbol('AI_ACCOUNT_DIRECTORY');

import { DiscoveryService } from '@nestjs/core';
import type { SystemInstruction, TaintMark } from '@metatronos/shared-types';
import type { AiTool } from '../ai-tools/ai-tool';
import type { TurnSource } from '../llm/turn-source';
import type { AppSettings } from '../settings/settings.service';
import type { PromptAudience } from './prompt-audience';

/** What a prompt section may look at when it renders. */
export interface PromptContext {
  now: Date;
  /** The owner's IANA zone (settings), for every date shown to the model. */
  timezone: string;
  instruction: SystemInstruction;
  settings: AppSettings;
  /** False when the memory toggle is off: no tools are offered, so none are listed. */
  toolsEnabled: boolean;
  /** The turn's narrower tool set, when it has one: only those tools are listed. */
  toolFilter?: (name: string) => boolean;
  source: TurnSource;
  /** Who reads this prompt; only sections that list it are rendered. */
  audience: PromptAudience;
  /** The conversation's mode; undefined when the turn has a fixed tool profile (an auto-reply). */
  mode?: string;
  /** The names of the tools this request offers, when the runner chose them. */
  offeredTools?: readonly string[];
  /** Every tool usable in this turn (any mode), when the runner has them: not asked again. */
  availableTools?: readonly AiTool[];
  /** The account the conversation selected (select_account), when it has one. */
  accountId?: string | null;
  /** The message this turn answers (memory recall looks for notes about it). */
  userMessage?: string;
  /** What third-party content has marked this turn (empty: none). */
  taint: readonly TaintMark[];
}

/**
 * One `## …` block of the combined prompt after the core instruction. Feature
 * modules contribute theirs by marking a provider with `@PromptSectionProvider()`;
 * the builder finds them all, so adding a section never edits the builder.
 */
export interface PromptSection {
  /** Stable id, for tests and ordering ties. */
  readonly id: string;
  /**
   * Lower first. Stable blocks first, so consecutive turns share a long cacheable prefix:
   * memory 20, database 30, tools 40, features 50–899; blocks that change from turn to turn
   * (counters, clocks) 900–999; the date and time last (1000).
   */
  readonly order: number;
  /**
   * Who may see this block: an allow-list. Left out, the block is shown to the
   * owner only, so a new section never reaches a contact or an unattended run
   * unless its author says so.
   */
  readonly audiences?: readonly PromptAudience[];
  /**
   * The modes whose tools this block is about (Pulse status → `automations`): shown
   * only while the conversation is in one of them. Left out: shown in every mode.
   */
  readonly modes?: readonly string[];
  /** The block with its heading, or `null` to leave it out this time. */
  render(context: PromptContext): string | null | Promise<string | null>;
}

export const PromptSectionProvider = DiscoveryService.createDecorator<void>();

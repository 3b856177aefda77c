import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { TaintMark } from '@metatronos/shared-types';
import { DiscoveryService } from '@nestjs/core';
import { Clock } from '../clock/clock';
import type { AiTool } from '../ai-tools/ai-tool';
import type { TurnSource } from '../llm/turn-source';
import { SettingsService } from '../settings/settings.service';
import { audienceOf, type PromptAudience } from './prompt-audience';
import {
  PromptSectionProvider,
  type PromptContext,
  type PromptSection,
} from './prompt-section';
import { SystemInstructionService } from './system-instruction.service';

export interface CombinedPromptOptions {
  source?: TurnSource;
  /** When the caller will offer no tools (e.g. an auto-reply profile), pass false so none are listed. */
  toolsAllowed?: boolean;
  /** The turn's narrower tool set (a caller's profile), so the tools section lists only those. */
  toolFilter?: (name: string) => boolean;
  /** Text appended after every section (Pulse adds its execution context this way). */
  extra?: string;
  /** Who reads the prompt (default: from `source`, an auto-reply counting as untrusted); picks the sections. */
  audience?: PromptAudience;
  /** The conversation's mode: sections that name modes appear in those only. Omitted: no mode section. */
  mode?: string;
  /** The tools the request offers (the runner's choice), listed by the tools section. */
  offeredTools?: readonly string[];
  /** Every tool usable in this turn, whatever the mode, when the caller has asked already. */
  availableTools?: readonly AiTool[];
  /** The conversation's selected account (for the accounts section). */
  accountId?: string | null;
  /** The message the turn answers (for the recalled-notes section). */
  userMessage?: string;
  /** What third-party content has marked the turn so far (the untrusted-content section). */
  taint?: readonly TaintMark[];
}

/** Sections without `modes` belong to every mode. */
export function isShownInMode(
  section: Pick<PromptSection, 'modes'>,
  mode: string | undefined,
): boolean {
  return !section.modes || (!!mode && section.modes.includes(mode));
}

/** Sections without `audiences` are the owner's only. */
export function isShownTo(
  section: Pick<PromptSection, 'audiences'>,
  audience: PromptAudience,
): boolean {
  return (section.audiences ?? ['owner']).includes(audience);
}

/**
 * buildCombinedPrompt(): the core instruction, then every contributed section in
 * order. A blank core instruction means no system prompt at all (`null`).
 */
@Injectable()
export class CombinedPromptBuilder implements OnModuleInit {
  private readonly logger = new Logger(CombinedPromptBuilder.name);
  private sections: PromptSection[] = [];
  /** The sections of each audience and mode (both fixed once the app has started). */
  private readonly shown = new Map<string, PromptSection[]>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly instruction: SystemInstructionService,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    const found = this.discovery
      .getProviders({ metadataKey: PromptSectionProvider.KEY })
      .map((wrapper) => wrapper.instance as PromptSection | undefined)
      .filter((s): s is PromptSection => !!s && typeof s.render === 'function');
    const ids = new Set<string>();
    for (const section of found) {
      if (ids.has(section.id))
        throw new Error(`Two prompt sections use the id '${section.id}'`);
      ids.add(section.id);
    }
    this.sections = found.sort(
      (a, b) => a.order - b.order || a.id.localeCompare(b.id),
    );
    this.shown.clear();
    this.logger.debug(
      `Prompt sections: ${this.sections.map((s) => s.id).join(', ')}`,
    );
  }

  /** The ids of the registered sections, in prompt order (those `audience` may see, when given). */
  sectionIds(audience?: PromptAudience): string[] {
    return this.sections
      .filter((s) => !audience || isShownTo(s, audience))
      .map((s) => s.id);
  }

  private sectionsFor(
    audience: PromptAudience,
    mode: string | undefined,
  ): PromptSection[] {
    const key = `${audience}\n${mode ?? ''}`;
    let sections = this.shown.get(key);
    if (!sections) {
      sections = this.sections.filter(
        (section) =>
          isShownTo(section, audience) && isShownInMode(section, mode),
      );
      // A mode is a name the app or an MCP server gives: a few dozen at most; cleared past that anyway.
      if (this.shown.size >= 256) this.shown.clear();
      this.shown.set(key, sections);
    }
    return sections;
  }

  async buildCombinedPrompt(
    options: CombinedPromptOptions = {},
  ): Promise<string | null> {
    const [instruction, settings] = await Promise.all([
      this.instruction.getSystemInstruction(),
      this.settings.get(),
    ]);
    if (!instruction.coreInstruction.trim()) return null;
    const source = options.source ?? 'chat';
    const audience = options.audience ?? audienceOf(source);
    const context: PromptContext = {
      now: this.clock.now(),
      timezone: settings.timezone,
      instruction,
      settings,
      toolsEnabled: instruction.memoryEnabled && options.toolsAllowed !== false,
      source,
      audience,
      toolFilter: options.toolFilter,
      mode: options.mode,
      offeredTools: options.offeredTools,
      availableTools: options.availableTools,
      accountId: options.accountId,
      userMessage: options.userMessage,
      taint: options.taint ?? [],
    };
    const sections = this.sectionsFor(audience, options.mode);
    const rendered = await Promise.all(
      sections.map((section) => section.render(context)),
    );
    const blocks = rendered.filter(
      (block): block is string => !!block && block.trim() !== '',
    );
    if (options.extra?.trim()) blocks.push(options.extra.trim());
    return `${instruction.coreInstruction.trim()}\n\n---\n\n${blocks.join('\n\n')}`;
  }
}

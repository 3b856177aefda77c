import { Injectable } from '@nestjs/common';
import {
  PromptSectionProvider,
  type PromptContext,
  type PromptSection,
} from '../system-instruction/prompt-section';
import { OWNER_AND_UNATTENDED } from '../system-instruction/prompt-audience';
import type { AiTool } from './ai-tool';
import { AiToolRegistry, type ModeTools } from './ai-tool-registry';

/** What a section was written from: the same inputs write the same text (tools and modes are not changed in place). */
interface Written {
  usable: readonly AiTool[];
  offered: readonly string[];
  mode: string | undefined;
  modeTools: readonly ModeTools[] | null;
  text: string | null;
}

/**
 * "## Available Tools": the conversation's mode, the other modes (one line each,
 * with the tools they load) and one line per tool offered right now. A turn with a
 * fixed tool profile (an auto-reply) lists its tools only. Absent when tools are off.
 */
@PromptSectionProvider()
@Injectable()
export class AvailableToolsPromptSection implements PromptSection {
  readonly id = 'tools';
  readonly order = 40;
  readonly audiences = OWNER_AND_UNATTENDED;

  constructor(private readonly registry: AiToolRegistry) {}

  /** The last section written for a turn: every turn of a mode offers the same tools until a tool, a mode or a setting changes. */
  private last: Written | null = null;

  async render({
    toolsEnabled,
    source,
    settings,
    toolFilter,
    mode,
    offeredTools,
    availableTools,
  }: PromptContext): Promise<string | null> {
    if (!toolsEnabled) return null;
    // The mode and the other modes are listed unless a fixed tool profile (a filter) applies.
    const modeTools = mode && !toolFilter ? this.registry.modeTools() : null;
    if (availableTools && offeredTools) {
      // The filter only matters through modeTools here: the offered tools are given.
      const last = this.last;
      if (
        last &&
        last.mode === mode &&
        last.modeTools === modeTools &&
        sameItems(last.usable, availableTools) &&
        sameItems(last.offered, offeredTools)
      )
        return last.text;
      const text = this.write(
        availableTools,
        new Set(offeredTools),
        mode,
        modeTools,
      );
      this.last = {
        usable: [...availableTools],
        offered: [...offeredTools],
        mode,
        modeTools,
        text,
      };
      return text;
    }
    const usable =
      availableTools ?? (await this.registry.available({ source, settings }));
    const offered = offeredTools
      ? new Set(offeredTools)
      : new Set(
          (mode && modeTools
            ? await this.registry.toolsFor({ source, settings }, { mode })
            : usable.filter((t) => !toolFilter || toolFilter(t.name))
          ).map((t) => t.name),
        );
    return this.write(usable, offered, mode, modeTools);
  }

  /** The section: `modeTools` when the mode and the other modes are listed (no fixed tool profile). */
  private write(
    usable: readonly AiTool[],
    offered: ReadonlySet<string>,
    mode: string | undefined,
    modeTools: readonly ModeTools[] | null,
  ): string | null {
    const tools = usable.filter((t) => offered.has(t.name));
    if (tools.length === 0) return null;
    const lines = ['## Available Tools'];
    if (mode && modeTools) {
      const usableNames = new Set(usable.map((t) => t.name));
      const others = modeTools
        .filter((m) => m.mode.name !== mode)
        .map((m) => ({
          name: m.mode.name,
          // A tool loaded on demand is named by its mode's find tool, not listed: a big MCP server stays one line.
          tools: m.tools.filter((t) => usableNames.has(t.name) && !t.onDemand),
        }))
        .filter((m) => m.tools.length > 0);
      lines.push(`Mode: ${mode}.`);
      if (others.length)
        lines.push(
          'Other modes (set_mode loads one; calling one of their tools switches to it):',
          ...others.map(
            (m) => `- ${m.name}: ${m.tools.map((t) => t.name).join(', ')}`,
          ),
          'Tools now:',
        );
    }
    lines.push(...tools.map((t) => `- **${t.name}**: ${t.promptLine}`));
    return lines.join('\n');
  }
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

import { Injectable } from '@nestjs/common';
import {
  PromptSectionProvider,
  type PromptContext,
  type PromptSection,
} from '../system-instruction/prompt-section';
import { OWNER_AND_UNATTENDED } from '../system-instruction/prompt-audience';
import { AiToolRegistry } from './ai-tool-registry';

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
    const usable =
      availableTools ?? (await this.registry.available({ source, settings }));
    const offered = offeredTools
      ? new Set(offeredTools)
      : new Set(
          (mode && !toolFilter
            ? await this.registry.toolsFor({ source, settings }, { mode })
            : usable.filter((t) => !toolFilter || toolFilter(t.name))
          ).map((t) => t.name),
        );
    const tools = usable.filter((t) => offered.has(t.name));
    if (tools.length === 0) return null;
    const lines = ['## Available Tools'];
    if (mode && !toolFilter) {
      const usableNames = new Set(usable.map((t) => t.name));
      const others = this.registry
        .modeTools()
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

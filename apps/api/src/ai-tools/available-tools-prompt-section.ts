import { Injectable } from '@nestjs/common';
import {
  PromptSectionProvider,
  type PromptContext,
  type PromptSection,
} from '../system-instruction/prompt-section';
import { OWNER_AND_UNATTENDED } from '../system-instruction/prompt-audience';
import { AiToolRegistry } from './ai-tool-registry';

/** "## Available Tools": one line per tool offered right now; absent when tools are off. */
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
  }: PromptContext): Promise<string | null> {
    if (!toolsEnabled) return null;
    const tools = (await this.registry.available({ source, settings })).filter(
      (t) => !toolFilter || toolFilter(t.name),
    );
    if (tools.length === 0) return null;
    return `## Available Tools\n${tools.map((t) => `- **${t.name}**: ${t.promptLine}`).join('\n')}`;
  }
}

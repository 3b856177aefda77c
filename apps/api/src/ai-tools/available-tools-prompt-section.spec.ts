import { Injectable } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { z } from 'zod';
import type { AppSettings } from '../settings/settings.service';
import type { SystemInstruction } from '@metatronos/shared-types';
import type { PromptContext } from '../system-instruction/prompt-section';
import { AiToolProvider, META_MODE, type AiTool } from './ai-tool';
import { AiToolRegistry } from './ai-tool-registry';
import { AvailableToolsPromptSection } from './available-tools-prompt-section';
import { DataMode, DefaultMode } from './modes/core-modes';

function tool(name: string, modes: string[]): new () => AiTool {
  @AiToolProvider()
  @Injectable()
  class Tool implements AiTool {
    readonly name = name;
    readonly modes = modes;
    readonly description = `The ${name} tool`;
    readonly schema = z.object({});
    readonly promptLine = `use ${name}.`;
    async execute(): Promise<string> {
      return '{}';
    }
  }
  return Tool;
}

describe('AvailableToolsPromptSection', () => {
  let registry: AiToolRegistry;
  let section: AvailableToolsPromptSection;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DiscoveryModule],
      providers: [
        AiToolRegistry,
        AvailableToolsPromptSection,
        DefaultMode,
        DataMode,
        tool('plan', ['default']),
        tool('query', ['data']),
        tool('set_mode', [META_MODE]),
      ],
    }).compile();
    await moduleRef.init();
    registry = moduleRef.get(AiToolRegistry);
    section = moduleRef.get(AvailableToolsPromptSection);
  });

  const settings = {} as AppSettings;
  const base = {
    now: new Date(),
    timezone: 'UTC',
    instruction: {} as SystemInstruction,
    settings,
    toolsEnabled: true,
    source: 'chat',
    audience: 'owner',
    taint: [],
  } as const satisfies Partial<PromptContext>;

  /** The section as a turn asks for it (its tools at hand), and as the preview does (asked of the registry). */
  const turn = (mode: string, usable: readonly AiTool[]) =>
    section.render({
      ...base,
      mode,
      availableTools: usable,
      offeredTools: registry.modeSelection(usable, mode).map((t) => t.name),
    });
  const asked = (mode: string, offered: readonly string[]) =>
    section.render({ ...base, mode, offeredTools: offered });

  it('writes what it wrote for the same tools and mode, and anew when the mode or the tools change', async () => {
    const usable = await registry.available(base);
    const first = await turn('default', usable);
    expect(first).toBe(await asked('default', ['set_mode', 'plan']));
    expect(first).toContain('Mode: default.');
    expect(first).toContain('- **plan**: use plan.');
    expect(await turn('default', [...usable])).toBe(first);

    const data = await turn('data', usable);
    expect(data).toBe(await asked('data', ['set_mode', 'query']));
    expect(data).toContain('- **query**: use query.');
    expect(data).toContain('- default: plan');

    // `plan` switched off: the default mode has nothing left to name.
    const without = await turn(
      'data',
      usable.filter((t) => t.name !== 'plan'),
    );
    expect(without).toContain('- **query**: use query.');
    expect(without).not.toContain('plan');

    // The same tools offered in another mode: the mode line differs.
    const metaOnly = (mode: string) =>
      section.render({
        ...base,
        mode,
        availableTools: usable,
        offeredTools: ['set_mode'],
      });
    expect(await metaOnly('default')).toContain('Mode: default.');
    expect(await metaOnly('data')).toContain('Mode: data.');

    expect(await turn('data', usable)).toBe(data);
    expect(await turn('default', usable)).toBe(first);
  });
});

import { Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { z } from 'zod';
import {
  AiModeProvider,
  AiToolProvider,
  DEFAULT_MODE,
  META_MODE,
  toolError,
  type AiMode,
  type AiTool,
  type AiToolContext,
} from '../ai-tool';
import { AiToolRegistry } from '../ai-tool-registry';
import { modeLabel } from './mode-names';

type SetModeSchema = z.ZodObject<{ mode: z.ZodEnum }>;

/**
 * `set_mode({ mode })`: loads another mode's tools for the rest of the
 * conversation; the turn's next model request already carries them.
 */
@AiToolProvider()
@Injectable()
export class SetModeTool implements AiTool<SetModeSchema> {
  readonly name = 'set_mode';
  readonly modes = [META_MODE];
  readonly promptLine =
    'switch the tools of this conversation to another mode.';
  private built: {
    key: string;
    /** The registry's mode list it was built from: the same array means the same modes. */
    from: readonly AiMode[];
    schema: SetModeSchema;
    description: string;
  } | null = null;
  private registered: AiMode[] | null = null;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly registry: AiToolRegistry,
  ) {}

  /**
   * Built on first read (the registry reads it at start-up, once every mode provider
   * exists) and again when the modes change (an MCP server added or removed).
   */
  private build(): { schema: SetModeSchema; description: string } {
    const current = this.registry.modes();
    if (this.built?.from === current && this.registered?.length)
      return this.built;
    // The app's own modes are fixed once it has started; walking every provider for them on
    // each model request (the description is read per request) cost every turn.
    const registered = this.registered?.length
      ? this.registered
      : (this.registered = this.discovery
          .getProviders({ metadataKey: AiModeProvider.KEY })
          .map((wrapper) => wrapper.instance as AiMode | undefined)
          .filter((m): m is AiMode => typeof m?.name === 'string'));
    const names = new Set(registered.map((m) => m.name));
    const modes = [
      ...registered,
      ...current.filter((m) => !names.has(m.name)),
    ].sort(
      (a, b) =>
        Number(b.name === DEFAULT_MODE) - Number(a.name === DEFAULT_MODE) ||
        a.name.localeCompare(b.name),
    );
    const key = modes.map((m) => `${m.name}:${m.description}`).join('\n');
    if (this.built?.key === key) {
      this.built.from = current;
      return this.built;
    }
    const enumNames = modes.length ? modes.map((m) => m.name) : [DEFAULT_MODE];
    this.built = {
      key,
      from: current,
      schema: z.object({
        mode: z.enum(enumNames as [string, ...string[]]),
      }),
      description: `Load another mode's tools for this conversation (they replace the current ones at once). Modes:\n${modes
        .map((m) => `${m.name}: ${m.description}`)
        .join('\n')}`,
    };
    return this.built;
  }

  get schema(): SetModeSchema {
    return this.build().schema;
  }

  get description(): string {
    return this.build().description;
  }

  async execute(
    { mode }: { mode: string },
    context: AiToolContext,
  ): Promise<string> {
    const conversation = context.conversation;
    if (!conversation)
      return toolError('Modes cannot be changed in this reply.');
    if (!this.registry.hasMode(mode))
      return toolError(`There is no mode '${mode}'.`);
    const already = conversation.mode === mode;
    if (!already) await conversation.setMode(mode);
    const tools = (await this.registry.toolsFor(context, { mode }))
      .filter((t) => !this.registry.isMetaTool(t.name))
      .map((t) => t.name);
    return JSON.stringify({
      success: true,
      mode,
      message: already
        ? `Already in ${modeLabel(mode)}.`
        : `Switched to ${modeLabel(mode)}.`,
      tools,
    });
  }
}

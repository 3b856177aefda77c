import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { LlmToolSpec } from '../llm/llm-adapter';
import {
  AiToolProvider,
  toolError,
  type AiTool,
  type AiToolAvailabilityContext,
  type AiToolContext,
} from './ai-tool';
import { checkToolArguments } from './tool-arguments';

const TOOL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,63}$/;

/** Every tool contributed by a feature module, found at start-up. */
@Injectable()
export class AiToolRegistry implements OnModuleInit {
  private readonly logger = new Logger(AiToolRegistry.name);
  private readonly tools = new Map<string, AiTool>();

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders({
      metadataKey: AiToolProvider.KEY,
    })) {
      const tool = wrapper.instance as AiTool | undefined;
      if (!tool?.definition) continue;
      const { name } = tool.definition;
      if (!TOOL_NAME.test(name))
        throw new Error(`Tool name '${name}' is not a valid function name`);
      if (this.tools.has(name))
        throw new Error(`Two tools are named '${name}'`);
      this.tools.set(name, tool);
    }
    this.logger.debug(`Tools: ${[...this.tools.keys()].join(', ')}`);
  }

  /** The time limit of one call of `name`: the tool's own, or `fallback`. */
  timeoutOf(name: string, fallback: number): number {
    return this.tools.get(name)?.timeoutMs ?? fallback;
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** The tools offered in this context, in registration order. */
  async available(context: AiToolAvailabilityContext): Promise<AiTool[]> {
    const checks = await Promise.all(
      [...this.tools.values()].map(async (tool) =>
        (await (tool.isAvailable?.(context) ?? true)) ? tool : null,
      ),
    );
    return checks.filter((t): t is AiTool => t !== null);
  }

  async specs(context: AiToolAvailabilityContext): Promise<LlmToolSpec[]> {
    return (await this.available(context)).map((t) => t.definition);
  }

  /**
   * Runs one call and always answers with a JSON string: an unknown or
   * unavailable tool, bad arguments or a thrown error become `{"error": "..."}`.
   */
  async execute(
    name: string,
    args: Record<string, unknown>,
    context: AiToolContext,
  ): Promise<string> {
    const tool = this.tools.get(name);
    if (!tool || !(await (tool.isAvailable?.(context) ?? true)))
      return toolError(`Unknown or unavailable tool '${name}'`);
    const problem = checkToolArguments(tool.definition.parameters, args);
    if (problem) return toolError(problem);
    try {
      const result = await tool.execute(args, context);
      return typeof result === 'string' ? result : JSON.stringify(result);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.logger.warn(`Tool ${name} failed: ${message}`);
      return toolError(message);
    }
  }
}

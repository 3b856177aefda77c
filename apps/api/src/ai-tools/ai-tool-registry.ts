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
import { parseToolArguments, toolParameters } from './tool-argument-schema';

const TOOL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,63}$/;

/** Every tool contributed by a feature module, found at start-up. */
@Injectable()
export class AiToolRegistry implements OnModuleInit {
  private readonly logger = new Logger(AiToolRegistry.name);
  private readonly tools = new Map<string, AiTool>();
  /** What each provider is told about a tool, generated once from its schema. */
  private readonly toolSpecs = new Map<string, LlmToolSpec>();

  constructor(private readonly discovery: DiscoveryService) {}

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
    return (await this.available(context)).map(
      (t) => this.toolSpecs.get(t.name) as LlmToolSpec,
    );
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
    const tool = this.tools.get(name);
    if (!tool || !(await (tool.isAvailable?.(context) ?? true)))
      return toolError(`Unknown or unavailable tool '${name}'`);
    const checked = parseToolArguments(tool.schema, args);
    if (!checked.ok) return toolError(checked.error);
    try {
      const result = await tool.execute(checked.args, context);
      return typeof result === 'string' ? result : JSON.stringify(result);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.logger.warn(`Tool ${name} failed: ${message}`);
      return toolError(message);
    }
  }
}

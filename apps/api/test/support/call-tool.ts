import type { INestApplication } from '@nestjs/common';
import type { AiToolContext } from '../../src/ai-tools/ai-tool';
import { AiToolRegistry } from '../../src/ai-tools/ai-tool-registry';
import { SettingsService } from '../../src/settings/settings.service';

/**
 * What a turn hands a tool: an owner chat turn with the current settings, in no chat and for no
 * message, never aborted. Each field can be overridden (another source, a chat, a ToolTurn...).
 */
export async function toolContext(
  app: INestApplication,
  overrides: Partial<AiToolContext> = {},
): Promise<AiToolContext> {
  return {
    source: 'chat',
    settings: overrides.settings ?? (await app.get(SettingsService).get()),
    chatId: null,
    messageId: null,
    signal: new AbortController().signal,
    ...overrides,
  };
}

/**
 * Runs a tool as a turn does, through `AiToolRegistry.execute` (its arguments checked, the action
 * policy asked; a refusal or a throw answered as `{"error": …}`), and returns the parsed JSON
 * answer. `T` is what the caller reads; nothing checks it.
 */
export async function callTool<T = Record<string, unknown>>(
  app: INestApplication,
  name: string,
  args: unknown,
  context: Partial<AiToolContext> = {},
): Promise<T> {
  const result = await app
    .get(AiToolRegistry)
    .execute(name, args, await toolContext(app, context));
  return JSON.parse(result) as T;
}

import type {
  AssistantPart,
  ModePart,
  ToolCallRecord,
} from '@metatronos/shared-types';

/**
 * A reply part as stored. Tool arguments are kept as a JSON string: they are
 * the model's free-form objects and may hold keys a database refuses in a
 * document (db_query's `{ "$set": … }` is rejected as "invalid key" by
 * FerretDB, and `$`-prefixed or dotted keys are trouble on MongoDB too).
 */
export type StoredPart =
  | { type: 'text'; text: string }
  | ModePart
  | ({ type: 'tool_call' } & Omit<ToolCallRecord, 'arguments'> & {
        argumentsJson: string;
      });

export function encodeParts(parts: readonly AssistantPart[]): StoredPart[] {
  return parts.map((part) => {
    if (part.type !== 'tool_call') return { ...part };
    const { arguments: args, ...rest } = part;
    return { ...rest, argumentsJson: JSON.stringify(args ?? {}) };
  });
}

/** Reads stored parts back; parts stored before arguments were encoded keep their object. */
export function decodeParts(
  parts: readonly (StoredPart | AssistantPart)[] | undefined,
): AssistantPart[] {
  return (parts ?? []).map((part) => {
    if (part.type !== 'tool_call' || !('argumentsJson' in part))
      return { ...part } as AssistantPart;
    const { argumentsJson, ...rest } = part;
    let args: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(argumentsJson);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        args = parsed as Record<string, unknown>;
    } catch {
      // Left empty: a broken record must not break the chat.
    }
    return { ...rest, arguments: args };
  });
}

import { MCP_TOOL_CHOICES } from '@metatronos/shared-types';
import type { JsonSchemaObject } from '../llm/llm-adapter';

/**
 * Which tools may ever be offered to another agent over `/mcp`, and how far.
 * An explicit allow-list: a tool that is not here (bash, writes, sends,
 * permissions, fetches, paid generation…) is refused even when a token names
 * it. A multi-action tool is narrowed to its reading actions; the action
 * policy refuses any outward effect from an `mcp` turn as a second wall.
 */
interface Exposure {
  /** The argument that picks the action, and the values allowed over MCP. */
  readonly only?: { argument: string; values: readonly string[] };
}

const EXPOSURES: Readonly<Record<string, Exposure>> = {
  memory_search: {},
  read_file: {},
  calendar_actions: { only: { argument: 'action', values: ['list'] } },
  db_query: {
    only: {
      argument: 'operation',
      values: [
        'find',
        'findOne',
        'countDocuments',
        'aggregate',
        'listCollections',
      ],
    },
  },
};

/** The names a token may hold, in the console's order. */
export const MCP_EXPOSABLE_TOOLS: readonly string[] = MCP_TOOL_CHOICES.map(
  (c) => c.name,
);

/** What a token gets when the owner names no tools. */
export const MCP_DEFAULT_TOOLS: readonly string[] = MCP_TOOL_CHOICES.filter(
  (c) => c.byDefault,
).map((c) => c.name);

export function isMcpExposable(name: string): boolean {
  return Object.hasOwn(EXPOSURES, name);
}

/**
 * Why a call of an exposable tool may not run over MCP (a writing action), or
 * null. Only looks at the action argument; everything else is the tool's schema's job.
 */
export function mcpCallProblem(name: string, args: unknown): string | null {
  if (!isMcpExposable(name)) return `${name} is not offered over MCP`;
  const only = EXPOSURES[name].only;
  if (!only) return null;
  const value =
    args !== null && typeof args === 'object'
      ? (args as Record<string, unknown>)[only.argument]
      : undefined;
  if (typeof value === 'string' && only.values.includes(value)) return null;
  return `over MCP, ${name} takes only ${only.argument} ${only.values.map((v) => `"${v}"`).join(', ')}${value === undefined ? '' : ` (got ${JSON.stringify(value).slice(0, 60)})`}`;
}

/** The tool's argument schema as an MCP client sees it: the action argument narrowed to what is allowed. */
export function mcpInputSchema(
  name: string,
  parameters: JsonSchemaObject,
): JsonSchemaObject {
  const only = EXPOSURES[name]?.only;
  if (!only) return parameters;
  const properties = { ...(parameters.properties ?? {}) } as Record<
    string,
    Record<string, unknown>
  >;
  properties[only.argument] = {
    ...(properties[only.argument] ?? {}),
    type: 'string',
    enum: [...only.values],
  };
  const required = new Set(parameters.required ?? []);
  required.add(only.argument);
  return { ...parameters, properties, required: [...required] };
}

/** The note added to a narrowed tool's description. */
export function mcpDescriptionNote(name: string): string {
  const only = EXPOSURES[name]?.only;
  return only
    ? ` Over MCP only ${only.argument} ${only.values.map((v) => `"${v}"`).join(', ')} is available; other actions are refused.`
    : '';
}

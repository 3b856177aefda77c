import { z } from 'zod';
import type { JsonSchemaObject } from '../llm/llm-adapter';

/** The keywords both providers read the same way (as tool-argument-schema.ts keeps). */
const PORTABLE = new Set([
  'type',
  'description',
  'enum',
  'properties',
  'required',
  'items',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'pattern',
]);
const MAX_DEPTH = 8;
const MAX_DESCRIPTION = 500;

type Json = Record<string, unknown>;

/**
 * An MCP tool's input schema as both providers accept it: local `$ref`s resolved, a
 * union narrowed to its first non-null form, other keywords dropped. The call itself is
 * still checked against the whole schema (`argumentsSchema`).
 */
export function portableParameters(inputSchema: Json): JsonSchemaObject {
  const defs = {
    ...(isObject(inputSchema['$defs']) ? inputSchema['$defs'] : {}),
    ...(isObject(inputSchema['definitions']) ? inputSchema['definitions'] : {}),
  } as Record<string, Json>;
  const node = portable(inputSchema, defs, 0);
  return {
    ...node,
    type: 'object',
    properties: isObject(node['properties']) ? node['properties'] : {},
  } as JsonSchemaObject;
}

function portable(
  node: unknown,
  defs: Record<string, Json>,
  depth: number,
): Json {
  if (!isObject(node) || depth > MAX_DEPTH) return { type: 'string' };
  const ref = node['$ref'];
  if (typeof ref === 'string') {
    const match = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref);
    const target = match ? defs[match[1]] : undefined;
    return target ? portable(target, defs, depth + 1) : { type: 'string' };
  }
  const union = (node['anyOf'] ?? node['oneOf']) as unknown;
  if (Array.isArray(union) && node['type'] === undefined) {
    const first = union.find((u) => isObject(u) && u['type'] !== 'null');
    const chosen = portable(first, defs, depth + 1);
    return typeof node['description'] === 'string'
      ? { ...chosen, description: clip(node['description']) }
      : chosen;
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (!PORTABLE.has(key)) continue;
    if (key === 'type' && Array.isArray(value)) {
      out['type'] = value.find((t) => t !== 'null') ?? 'string';
    } else if (key === 'properties' && isObject(value)) {
      out['properties'] = Object.fromEntries(
        Object.entries(value).map(([name, child]) => [
          name,
          portable(child, defs, depth + 1),
        ]),
      );
    } else if (key === 'items') {
      out['items'] = portable(value, defs, depth + 1);
    } else if (key === 'description' && typeof value === 'string') {
      out['description'] = clip(value);
    } else if (key === 'required' && Array.isArray(value)) {
      out['required'] = value.filter((v) => typeof v === 'string');
    } else out[key] = value;
  }
  if (out['type'] === undefined)
    out['type'] = out['properties'] ? 'object' : 'string';
  if (out['type'] === 'array' && out['items'] === undefined)
    out['items'] = { type: 'string' };
  return out;
}

/** The schema each call is checked with: the server's own, as zod; a schema zod cannot read accepts any object. */
export function argumentsSchema(inputSchema: Json): z.ZodObject {
  try {
    const schema = z.fromJSONSchema(inputSchema as never);
    if (schema instanceof z.ZodObject) return schema;
  } catch {
    // An unusual schema: the server checks the arguments itself.
  }
  return z.object({}).loose();
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function clip(text: string): string {
  return text.length > MAX_DESCRIPTION
    ? `${text.slice(0, MAX_DESCRIPTION - 1)}…`
    : text;
}

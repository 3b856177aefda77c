import type { JsonSchemaObject } from '../llm/llm-adapter';

interface PropertySchema {
  type?: string;
  enum?: unknown[];
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: PropertySchema;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number')
    return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function matchesType(expected: string, actual: string): boolean {
  return expected === actual || (expected === 'number' && actual === 'integer');
}

/**
 * Checks tool arguments against the top level of the tool's JSON schema: an
 * object, required fields present, declared types, enums, string lengths,
 * number ranges. Returns a message naming the first problem, or null.
 */
export function checkToolArguments(
  schema: JsonSchemaObject,
  args: unknown,
): string | null {
  if (typeOf(args) !== 'object') return 'Arguments must be a JSON object';
  const record = args as Record<string, unknown>;
  for (const name of schema.required ?? []) {
    if (record[name] === undefined || record[name] === null)
      return `Missing required argument '${name}'`;
  }
  for (const [name, raw] of Object.entries(schema.properties)) {
    const value = record[name];
    if (value === undefined || value === null) continue;
    const property = raw as PropertySchema;
    const actual = typeOf(value);
    if (property.type && !matchesType(property.type, actual))
      return `Argument '${name}' must be ${article(property.type)} (got ${actual})`;
    if (property.enum && !property.enum.includes(value))
      return `Argument '${name}' must be one of: ${property.enum.map(String).join(', ')}`;
    if (
      typeof value === 'string' &&
      property.maxLength !== undefined &&
      value.length > property.maxLength
    ) {
      return `Argument '${name}' is ${value.length} characters; the limit is ${property.maxLength}`;
    }
    if (typeof value === 'number') {
      if (property.minimum !== undefined && value < property.minimum)
        return `Argument '${name}' must be at least ${property.minimum}`;
      if (property.maximum !== undefined && value > property.maximum)
        return `Argument '${name}' must be at most ${property.maximum}`;
    }
  }
  return null;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

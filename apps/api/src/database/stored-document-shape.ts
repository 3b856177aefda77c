import { mongo, type Schema } from 'mongoose';

/**
 * Whether a stored document has the shape the app's schema declares, as stored:
 * mongoose's casting is too lenient for this, since it turns "2026-01-01" into a
 * Date when validating, while the app reads with `lean()` and hands the stored
 * string to code that calls `toISOString()`. A restore checks every document with
 * it before anything changes; reads that must never fail (the settings at start,
 * the chat list) use it to leave out what is malformed instead of crashing.
 */

interface SchemaTypeLike {
  instance: string;
  path: string;
  isRequired?: boolean;
  options?: { required?: unknown; enum?: unknown };
  enumValues?: unknown[];
  schema?: Schema;
  caster?: SchemaTypeLike;
  $embeddedSchemaType?: SchemaTypeLike;
  $isMongooseDocumentArray?: boolean;
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Date) return 'a date';
  if (value instanceof mongo.ObjectId) return 'an ObjectId';
  if (value instanceof mongo.Binary) return 'binary data';
  if (typeof value === 'object') {
    const bsontype = (value as { _bsontype?: string })._bsontype;
    if (bsontype) return `a BSON ${bsontype}`;
    return 'an object';
  }
  if (typeof value === 'string')
    return `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `${typeof value === 'number' ? 'the number' : typeof value === 'boolean' ? 'the value' : `a ${typeof value}`} ${String(value)}`;
}

const isNumberLike = (v: unknown) =>
  typeof v === 'number' ||
  ['Int32', 'Double', 'Long', 'Decimal128'].includes(
    (v as { _bsontype?: string } | null)?._bsontype ?? '',
  );

/** What a value of this schema instance must be, or null when it is. */
function typeProblem(instance: string, value: unknown): string | null {
  const ok = (() => {
    switch (instance) {
      case 'String':
        return typeof value === 'string';
      case 'Number':
      case 'Double':
      case 'Int32':
      case 'BigInt':
      case 'Decimal128':
        return isNumberLike(value);
      case 'Boolean':
        return typeof value === 'boolean';
      case 'Date':
        return value instanceof Date && !Number.isNaN(value.getTime());
      case 'ObjectId':
        return value instanceof mongo.ObjectId;
      case 'Buffer':
      case 'UUID':
        return value instanceof mongo.Binary;
      case 'Map':
        return (
          typeof value === 'object' && value !== null && !Array.isArray(value)
        );
      default:
        return true; // Mixed and anything the schema leaves open
    }
  })();
  if (ok) return null;
  const wanted: Record<string, string> = {
    String: 'text',
    Number: 'a number',
    Double: 'a number',
    Int32: 'a number',
    BigInt: 'a number',
    Decimal128: 'a number',
    Boolean: 'true or false',
    Date: 'a date',
    ObjectId: 'an ObjectId',
    Buffer: 'binary data',
    UUID: 'binary data',
    Map: 'an object',
  };
  return `must be ${wanted[instance] ?? instance} but is ${describe(value)}`;
}

function isRequired(type: SchemaTypeLike): boolean {
  const required = type.options?.required;
  return (
    type.isRequired === true &&
    (required === true || (Array.isArray(required) && required[0] === true))
  );
}

/** The value at a dotted path, or a problem when a part of the path is not an object. */
export function valueAt(
  doc: Record<string, unknown>,
  path: string,
): { value: unknown } | { problem: string; prefix: string } {
  let current: unknown = doc;
  const parts = path.split('.');
  for (let i = 0; i < parts.length; i += 1) {
    if (current === undefined || current === null) return { value: undefined };
    if (typeof current !== 'object' || Array.isArray(current))
      return {
        prefix: parts.slice(0, i).join('.'),
        problem: `must be an object but is ${describe(current)}`,
      };
    current = (current as Record<string, unknown>)[parts[i]];
  }
  return { value: current };
}

/** What is wrong with one field: its path as the owner reads it (`a.b[2].c`) and why. */
export interface ShapeProblem {
  path: string;
  problem: string;
}

/** Every problem of one document against a schema, as `<path> <why>` sentences. */
export function schemaProblems(
  schema: Schema,
  doc: Record<string, unknown>,
): string[] {
  return shapeProblems(schema, doc).map((p) => `${p.path} ${p.problem}`);
}

/** Every problem of one document against a schema. */
export function shapeProblems(
  schema: Schema,
  doc: Record<string, unknown>,
  prefix = '',
): ShapeProblem[] {
  const problems: ShapeProblem[] = [];
  const add = (path: string, problem: string) =>
    problems.push({ path, problem });
  const seenPrefix = new Set<string>();
  schema.eachPath((path, raw) => {
    const type = raw as unknown as SchemaTypeLike;
    const found = valueAt(doc, path);
    if ('problem' in found) {
      if (!seenPrefix.has(found.prefix)) {
        seenPrefix.add(found.prefix);
        add(`${prefix}${found.prefix}`, found.problem);
      }
      return;
    }
    const value = found.value;
    const name = `${prefix}${path}`;
    if (value === undefined || value === null) {
      if (isRequired(type)) add(name, 'is required but missing');
      return;
    }
    if (type.instance === 'Array') {
      if (!Array.isArray(value)) {
        add(name, `must be a list but is ${describe(value)}`);
        return;
      }
      value.forEach((item, i) => {
        if (type.schema) {
          if (typeof item !== 'object' || item === null || Array.isArray(item))
            add(`${name}[${i}]`, `must be an object but is ${describe(item)}`);
          else
            problems.push(
              ...shapeProblems(
                type.schema,
                item as Record<string, unknown>,
                `${name}[${i}].`,
              ),
            );
          return;
        }
        const element = type.$embeddedSchemaType ?? type.caster;
        if (!element || item === null || item === undefined) return;
        const problem = typeProblem(element.instance, item);
        if (problem) add(`${name}[${i}]`, problem);
      });
      return;
    }
    if (type.instance === 'Embedded' && type.schema) {
      if (typeof value !== 'object' || Array.isArray(value))
        add(name, `must be an object but is ${describe(value)}`);
      else
        problems.push(
          ...shapeProblems(
            type.schema,
            value as Record<string, unknown>,
            `${name}.`,
          ),
        );
      return;
    }
    const problem = typeProblem(type.instance, value);
    if (problem) {
      add(name, problem);
      return;
    }
    const allowed = type.enumValues;
    if (
      type.instance === 'String' &&
      Array.isArray(allowed) &&
      allowed.length > 0 &&
      !allowed.includes(value)
    )
      add(
        name,
        `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')} but is ${describe(value)}`,
      );
  });
  return problems;
}

/**
 * The document without its malformed top-level fields (so the reader's defaults
 * apply to them), and the problems found. Used where a read must never fail.
 */
export function keepWellFormed<T extends object>(
  schema: Schema,
  doc: T,
): { doc: Partial<T>; problems: ShapeProblem[] } {
  const problems = shapeProblems(schema, doc as Record<string, unknown>);
  if (!problems.length) return { doc, problems };
  const copy: Record<string, unknown> = { ...(doc as Record<string, unknown>) };
  for (const { path } of problems) delete copy[path.split(/[.[]/)[0]];
  return { doc: copy as Partial<T>, problems };
}

/** Whether a stored document has exactly the declared shape. */
export function isWellFormed(schema: Schema, doc: object): boolean {
  return shapeProblems(schema, doc as Record<string, unknown>).length === 0;
}

import {
  BadRequestException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import {
  JSON_MAX_DEPTH,
  QUERY_TOO_DEEP_MESSAGE,
  jsonNestsDeeperThan,
  refuseDeepJson,
  refuseDeepQuery,
  valueNestsDeeperThan,
} from './json-depth';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('JSON depth limit', () => {
  it('counts objects and arrays alike, top level included', () => {
    expect(jsonNestsDeeperThan('{}', 1)).toBe(false);
    expect(jsonNestsDeeperThan('{"a":[]}', 1)).toBe(true);
    expect(jsonNestsDeeperThan('{"a":[{"b":1}],"c":{}}', 3)).toBe(false);
    expect(jsonNestsDeeperThan('{"a":[{"b":[1]}]}', 3)).toBe(true);
    expect(jsonNestsDeeperThan(nested(64), 64)).toBe(false);
    expect(jsonNestsDeeperThan(nested(65), 64)).toBe(true);
    // Siblings do not add up.
    expect(jsonNestsDeeperThan(`[${Array(100).fill('[]').join(',')}]`, 2)).toBe(
      false,
    );
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonNestsDeeperThan(JSON.stringify({ a: '[[[[{{{{' }), 1)).toBe(
      false,
    );
    expect(jsonNestsDeeperThan(JSON.stringify({ a: 'x\\"[[[["' }), 1)).toBe(
      false,
    );
    expect(jsonNestsDeeperThan(JSON.stringify(['\\', [[]]]), 2)).toBe(true);
  });

  it('reads UTF-8 bytes and refuses every other charset (415) before scanning', () => {
    const deep = `{"t":"é€","d":${nested(70)}}`;
    expect(() =>
      refuseDeepJson({} as never, {}, Buffer.from(deep, 'utf8'), 'utf-8'),
    ).toThrow(BadRequestException);
    const fine = `{"t":"é€","d":${nested(JSON_MAX_DEPTH - 1)}}`;
    for (const charset of ['utf-8', 'UTF8'])
      expect(() =>
        refuseDeepJson({} as never, {}, Buffer.from(fine, 'utf8'), charset),
      ).not.toThrow();
    for (const charset of ['utf-16', 'utf-16le', 'utf-16be', 'utf-32'])
      expect(() =>
        refuseDeepJson({} as never, {}, Buffer.from(fine, 'utf16le'), charset),
      ).toThrow(UnsupportedMediaTypeException);
  });

  it('measures parsed values of any depth without recursion', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    expect(valueNestsDeeperThan(deep, 64)).toBe(true);
    expect(valueNestsDeeperThan({ a: { b: [1, { c: 2 }] } }, 4)).toBe(false);
    expect(valueNestsDeeperThan({ a: { b: [1, { c: 2 }] } }, 3)).toBe(true);
    expect(valueNestsDeeperThan('text', 0)).toBe(false);
  });

  it('refuses a query that parsed into objects nested deeper than the limit', () => {
    const run = (query: unknown) => {
      let passed: unknown = 'not called';
      const next = ((error?: unknown) => (passed = error)) as NextFunction;
      refuseDeepQuery({ query } as Request, {} as Response, next);
      return passed;
    };
    let deep: Record<string, unknown> = { a: '1' };
    for (let i = 0; i < JSON_MAX_DEPTH - 1; i++) deep = { a: deep };
    expect(run(deep)).toBeUndefined();
    const refused = run({ a: deep });
    expect(refused).toBeInstanceOf(BadRequestException);
    expect((refused as BadRequestException).message).toBe(
      QUERY_TOO_DEEP_MESSAGE,
    );
    expect(run({ limit: '10' })).toBeUndefined();
  });
});

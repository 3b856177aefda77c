import {
  BadRequestException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';

/** No request body or query of this API nests deeper; deeper input is refused before anything recurses over it. */
export const JSON_MAX_DEPTH = 64;
export const JSON_TOO_DEEP_MESSAGE = `JSON nested deeper than ${JSON_MAX_DEPTH} levels is not accepted`;
export const JSON_NOT_UTF8_MESSAGE =
  'JSON bodies must be UTF-8 (Content-Type: application/json; charset=utf-8)';
export const QUERY_TOO_DEEP_MESSAGE = `A query string nested deeper than ${JSON_MAX_DEPTH} levels is not accepted`;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests objects/arrays deeper than `max`, read in one pass
 * without parsing (brackets inside strings do not count). Takes the bytes of
 * any ASCII-compatible encoding (UTF-8) or a decoded string.
 */
export function jsonNestsDeeperThan(
  text: Uint8Array | string,
  max: number,
): boolean {
  const at =
    typeof text === 'string'
      ? (i: number) => text.charCodeAt(i)
      : (i: number) => text[i];
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = at(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}

/** Whether a parsed value (e.g. a query object) nests deeper than `max`; iterative, so any depth is safe to ask about. */
export function valueNestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (node === null || typeof node !== 'object') continue;
    if (depth + 1 > max) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * body-parser `verify`: refuses a JSON body nested too deeply before it is
 * parsed. Only UTF-8 is read (RFC 8259 requires it between systems): the scan
 * must see the text exactly as the parser will, and another charset (UTF-16
 * whose byte order the parser guesses, UTF-32) could hide the brackets from it.
 */
export function refuseDeepJson(
  _req: IncomingMessage,
  _res: unknown,
  body: Buffer,
  encoding: string,
): void {
  // An HttpException keeps its status through body-parser, and Nest answers it in its usual shape.
  if (!/^utf-?8$/i.test(encoding))
    throw new UnsupportedMediaTypeException(JSON_NOT_UTF8_MESSAGE);
  // UTF-8 is scanned as bytes: a multi-byte character never contains an ASCII byte.
  if (jsonNestsDeeperThan(body, JSON_MAX_DEPTH))
    throw new BadRequestException(JSON_TOO_DEEP_MESSAGE);
}

/**
 * Middleware: a query string that parses into objects nested too deeply is
 * refused, with the same limit as bodies (the query object counts as the body's
 * top level). Express's default query parser never nests; this keeps the rule
 * if an extended parser is ever turned on.
 */
export function refuseDeepQuery(
  req: Request,
  _res: Response,
  next: NextFunction,
): void {
  next(
    valueNestsDeeperThan(req.query, JSON_MAX_DEPTH)
      ? new BadRequestException(QUERY_TOO_DEEP_MESSAGE)
      : undefined,
  );
}

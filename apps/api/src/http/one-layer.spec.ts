import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { inOneLayer } from './one-layer';

type Step =
  | 'next'
  | 'error'
  | 'route'
  | 'router'
  | 'throw'
  | 'answer'
  | 'later'
  | 'reject';
const boom = new Error('boom');

/** A handler that records its turn and then does what `step` says. */
function handler(name: string, step: Step, seen: string[]): RequestHandler {
  return (_req: Request, _res: Response, next: NextFunction) => {
    seen.push(name);
    if (step === 'reject') return Promise.reject(boom);
    if (step === 'next') next();
    else if (step === 'error') next(boom);
    else if (step === 'route') next('route');
    else if (step === 'router') next('router');
    else if (step === 'throw') throw boom;
    else if (step === 'later') setImmediate(() => next());
    // 'answer': the handler ends the request itself
    return undefined;
  };
}

async function run(
  steps: Step[],
): Promise<{ seen: string[]; outer: unknown[][] }> {
  const seen: string[] = [];
  const outer: unknown[][] = [];
  const layer = inOneLayer(...steps.map((s, i) => handler(`h${i}`, s, seen)));
  await new Promise<void>((done) => {
    layer({} as Request, {} as Response, (...args: unknown[]) => {
      outer.push(args);
      done();
    });
    if (steps.includes('answer')) done();
  });
  await new Promise((r) => setImmediate(r));
  return { seen, outer };
}

describe('inOneLayer', () => {
  it.each<[string, Step[], string[], unknown[][]]>([
    [
      'all go on: the router goes on once',
      ['next', 'next', 'next'],
      ['h0', 'h1', 'h2'],
      [[]],
    ],
    [
      'an error skips the rest',
      ['next', 'error', 'next'],
      ['h0', 'h1'],
      [[boom]],
    ],
    ['a throw is an error', ['throw', 'next'], ['h0'], [[boom]]],
    [
      "an async handler's rejection is an error",
      ['reject', 'next'],
      ['h0'],
      [[boom]],
    ],
    [
      "next('route') goes on, as at the router's level",
      ['route', 'next'],
      ['h0', 'h1'],
      [[]],
    ],
    [
      "next('router') leaves the router",
      ['router', 'next'],
      ['h0'],
      [['router']],
    ],
    [
      'an answer stops the sequence',
      ['next', 'answer', 'next'],
      ['h0', 'h1'],
      [],
    ],
    ['a later next goes on', ['later', 'next'], ['h0', 'h1'], [[]]],
    ['no handler: the router goes on', [], [], [[]]],
  ])('%s', async (_, steps, seen, outer) => {
    const result = await run(steps);
    expect(result.seen).toEqual(seen);
    expect(result.outer).toEqual(outer);
  });
});

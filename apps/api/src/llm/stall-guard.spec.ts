import {
  LlmProviderError,
  type LlmAdapter,
  type LlmTurnRequest,
  type LlmTurnSink,
} from './llm-adapter';
import { guardStalls } from './stall-guard';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An adapter that plays a script of steps against the sink and rejects as soon as its signal aborts. */
function scripted(
  steps: Array<{ wait: number; then: 'text' | 'activity' | 'tool' }>,
): LlmAdapter {
  return {
    streamTurn: (request: LlmTurnRequest, sink: LlmTurnSink) =>
      new Promise((resolve, reject) => {
        request.signal.addEventListener('abort', () =>
          reject(new LlmProviderError('aborted', 'aborted')),
        );
        void (async () => {
          for (const step of steps) {
            await sleep(step.wait);
            if (request.signal.aborted) return;
            if (step.then === 'text') sink.onText('x');
            else if (step.then === 'activity') sink.onActivity?.();
            else await sink.executeTool({ id: '1', name: 't', arguments: {} });
          }
          resolve({});
        })();
      }),
  };
}

function request(signal = new AbortController().signal): LlmTurnRequest {
  return {
    model: 'm',
    systemPrompt: null,
    history: [],
    userMessage: 'hi',
    tools: null,
    maxToolRounds: 1,
    signal,
  };
}

const sink = (toolMs = 0): LlmTurnSink => ({
  onText: () => undefined,
  executeTool: async () => {
    await sleep(toolMs);
    return '{}';
  },
});

/**
 * Plays a turn on Jest's fake clock (timers and `performance.now`): the steps' waits and the
 * guard's limit are compared exactly, so a busy machine's late timers cannot turn a 60 ms gap
 * under a 100 ms limit into a stall. Resolves with how the turn ended.
 */
async function played(turn: Promise<unknown>, forMs = 5_000) {
  const outcome = turn.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await jest.advanceTimersByTimeAsync(forMs);
  return outcome;
}

describe('guardStalls', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('fails with a readable stalled error when nothing arrives within the limit', async () => {
    const guarded = guardStalls(
      scripted([{ wait: 1000, then: 'text' }]),
      100,
      'Ollama',
    );
    expect(await played(guarded.streamTurn(request(), sink()))).toEqual({
      error: expect.objectContaining({
        kind: 'stalled',
        message:
          'Ollama sent nothing for 0.1 s, so the reply was stopped. Try again; if it keeps happening, the provider may be overloaded.',
      }),
    });
  });

  it('fails at the limit, not later', async () => {
    const guarded = guardStalls(
      scripted([
        { wait: 60, then: 'text' },
        { wait: 101, then: 'text' },
      ]),
      100,
      'Ollama',
    );
    expect(await played(guarded.streamTurn(request(), sink()))).toEqual({
      error: expect.objectContaining({ kind: 'stalled' }),
    });
  });

  it('counts any chunk (not only text) as a sign of life', async () => {
    const guarded = guardStalls(
      scripted([
        { wait: 60, then: 'activity' },
        { wait: 60, then: 'activity' },
        { wait: 60, then: 'text' },
        { wait: 60, then: 'activity' },
      ]),
      100,
      'OpenAI',
    );
    expect(await played(guarded.streamTurn(request(), sink()))).toEqual({
      value: {},
    });
  });

  it('does not count the time a tool runs', async () => {
    const guarded = guardStalls(
      scripted([
        { wait: 20, then: 'tool' },
        { wait: 20, then: 'text' },
      ]),
      100,
      'OpenAI',
    );
    expect(await played(guarded.streamTurn(request(), sink(300)))).toEqual({
      value: {},
    });
  });

  it("leaves the caller's own abort as it is, and 0 turns the guard off", async () => {
    const controller = new AbortController();
    const guarded = guardStalls(
      scripted([{ wait: 1000, then: 'text' }]),
      500,
      'OpenAI',
    );
    const turn = guarded.streamTurn(request(controller.signal), sink());
    setTimeout(() => controller.abort(), 20);
    expect(await played(turn)).toEqual({
      error: expect.objectContaining({ kind: 'aborted' }),
    });

    const inner = scripted([]);
    expect(guardStalls(inner, 0, 'OpenAI')).toBe(inner);
  });
});

import { linkAbort } from './abort-link';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('linkAbort (AbortSignal.any + AbortSignal.timeout, released at the scope end)', () => {
  it("aborts with a source's reason when that source aborts", () => {
    const a = new AbortController();
    const b = new AbortController();
    const link = linkAbort([a.signal, b.signal], 60_000);
    expect(link.signal.aborted).toBe(false);
    b.abort('stop pressed');
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBe('stop pressed');
    a.abort('later');
    expect(link.signal.reason).toBe('stop pressed');
    link.dispose();
  });

  it('starts aborted, with its reason, when a source already is', () => {
    const a = new AbortController();
    a.abort('gone');
    const link = linkAbort([a.signal], 60_000);
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBe('gone');
  });

  it('aborts with a TimeoutError when the time runs out, as AbortSignal.timeout does', async () => {
    const link = linkAbort([new AbortController().signal], 20);
    await sleep(60);
    expect(link.signal.aborted).toBe(true);
    const reason = link.signal.reason as DOMException;
    expect(reason).toBeInstanceOf(DOMException);
    expect(reason.name).toBe('TimeoutError');
  });

  it('follows nothing after dispose(): no timer, no listener left on the source', async () => {
    const a = new AbortController();
    let listeners = 0;
    const add = a.signal.addEventListener.bind(a.signal);
    const remove = a.signal.removeEventListener.bind(a.signal);
    a.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      listeners += 1;
      add(...args);
    }) as typeof add;
    a.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      listeners -= 1;
      remove(...args);
    }) as typeof remove;
    const link = linkAbort([a.signal], 20);
    expect(listeners).toBe(1);
    link.dispose();
    expect(listeners).toBe(0);
    await sleep(60);
    a.abort('after the scope');
    expect(link.signal.aborted).toBe(false);
  });

  it('without a time limit, only the sources abort it', async () => {
    const a = new AbortController();
    const link = linkAbort([a.signal]);
    await sleep(10);
    expect(link.signal.aborted).toBe(false);
    a.abort();
    expect(link.signal.aborted).toBe(true);
    expect((link.signal.reason as DOMException).name).toBe('AbortError');
  });
});

import {
  type PacerClock,
  SSE_FRAME_MS,
  type SseOutput,
  SsePacer,
} from './sse-pacer';

/** A clock whose ticks and timers run only when the test says so. */
class FakeClock implements PacerClock {
  time = 1_000;
  private ticks: (() => void)[] = [];
  private timers: { at: number; run: () => void; id: number }[] = [];
  private ids = 0;

  now(): number {
    return this.time;
  }
  soon(run: () => void): void {
    this.ticks.push(run);
  }
  later(run: () => void, ms: number): unknown {
    const id = ++this.ids;
    this.timers.push({ at: this.time + ms, run, id });
    return id;
  }
  cancel(handle: unknown): void {
    this.timers = this.timers.filter((timer) => timer.id !== handle);
  }
  /** Runs the queued ticks (the continuations of the current read). */
  tick(): void {
    const ticks = this.ticks;
    this.ticks = [];
    for (const run of ticks) run();
  }
  /** Moves time on, running the timers that come due. */
  advance(ms: number): void {
    this.time += ms;
    const due = this.timers.filter((timer) => timer.at <= this.time);
    this.timers = this.timers.filter((timer) => timer.at > this.time);
    for (const timer of due) timer.run();
  }
}

function setUp() {
  const clock = new FakeClock();
  const writes: string[] = [];
  const out: SseOutput & { headersFlushed: number; ended: boolean } = {
    headersFlushed: 0,
    ended: false,
    write: (text) => {
      writes.push(text);
    },
    flushHeaders() {
      this.headersFlushed++;
    },
    get headersSent() {
      return writes.length > 0 || this.headersFlushed > 0;
    },
    get closed() {
      return this.ended;
    },
  };
  const pacer = new SsePacer(out, clock);
  /** The events' names in each write. */
  const names = () =>
    writes.map((text) =>
      [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]).join(','),
    );
  return { clock, writes, out, pacer, names };
}

describe('SsePacer', () => {
  it('writes the events of one tick in one write, on that tick, the first words included', () => {
    const { clock, pacer, names, writes } = setUp();
    pacer.start();
    pacer.event('message', { id: 'm1' });
    clock.tick();
    expect(names()).toEqual(['message']);
    pacer.event('delta', { text: 'Hel' });
    pacer.event('delta', { text: 'lo' });
    clock.tick();
    expect(names()).toEqual(['message', 'delta,delta']);
    expect(writes[1]).toBe(
      'event: delta\ndata: {"text":"Hel"}\n\nevent: delta\ndata: {"text":"lo"}\n\n',
    );
  });

  it('after the first words, holds what follows until a frame has passed since the last write', () => {
    const { clock, pacer, names } = setUp();
    pacer.start();
    pacer.event('message', {});
    clock.tick();
    pacer.event('delta', { text: 'a' });
    clock.tick();
    clock.advance(3);
    pacer.event('delta', { text: 'b' });
    clock.tick();
    clock.advance(5);
    pacer.event('delta', { text: 'c' });
    clock.tick();
    expect(names()).toEqual(['message', 'delta']);
    clock.advance(SSE_FRAME_MS - 8 - 1);
    expect(names()).toEqual(['message', 'delta']);
    clock.advance(1);
    expect(names()).toEqual(['message', 'delta', 'delta,delta']);
    // A frame after that write, the next delta goes on its tick again.
    clock.advance(SSE_FRAME_MS);
    pacer.event('delta', { text: 'd' });
    clock.tick();
    expect(names()).toEqual(['message', 'delta', 'delta,delta', 'delta']);
  });

  it('does not hold back the first words, however soon they follow other events', () => {
    const { clock, pacer, names } = setUp();
    pacer.start();
    pacer.event('message', {});
    clock.tick();
    clock.advance(1);
    pacer.event('tool', { name: 'db_query' });
    clock.tick();
    clock.advance(1);
    pacer.event('delta', { text: 'first' });
    clock.tick();
    expect(names()).toEqual(['message', 'tool', 'delta']);
  });

  it('sends the headers alone when no event came on the first tick', () => {
    const { clock, pacer, out, writes } = setUp();
    pacer.start();
    clock.tick();
    expect(out.headersFlushed).toBe(1);
    expect(writes).toEqual([]);
  });

  it('hands the held events to the last write and writes nothing after the end', () => {
    const { clock, pacer, names } = setUp();
    pacer.start();
    pacer.event('delta', { text: 'a' });
    clock.tick();
    pacer.event('delta', { text: 'b' });
    pacer.event('done', {});
    clock.tick();
    const rest = pacer.end();
    expect(rest).toContain('event: delta');
    expect(rest).toContain('event: done');
    clock.advance(SSE_FRAME_MS * 2);
    clock.tick();
    pacer.event('delta', { text: 'late' });
    clock.tick();
    clock.advance(SSE_FRAME_MS * 2);
    expect(names()).toEqual(['delta']);
  });

  it('writes nothing once the client went away', () => {
    const { clock, pacer, out, writes } = setUp();
    pacer.start();
    pacer.event('delta', { text: 'a' });
    out.ended = true;
    clock.tick();
    expect(writes).toEqual([]);
  });
});

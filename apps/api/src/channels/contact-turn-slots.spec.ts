import { getMaxListeners } from 'node:events';
import { ContactTurnSlots, contactsStopController } from './contact-turn-slots';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ContactTurnSlots', () => {
  it('lets `limit` turns run at once and hands each freed slot to the longest waiter', async () => {
    const slots = new ContactTurnSlots(() => 2);
    const signal = new AbortController().signal;
    const started: string[] = [];
    const take = (name: string) =>
      slots.acquire(signal).then((release) => {
        started.push(name);
        return release;
      });
    const a = take('a');
    const b = take('b');
    const c = take('c');
    const d = take('d');
    await tick();
    expect(started).toEqual(['a', 'b']);
    expect(slots.inUse).toBe(2);
    const releaseB = await b;
    releaseB();
    releaseB(); // a second release frees nothing more
    await tick();
    expect(started).toEqual(['a', 'b', 'c']);
    expect(slots.inUse).toBe(2);
    (await a)();
    await tick();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    (await c)();
    (await d)();
    expect(slots.inUse).toBe(0);
  });

  it('gives up a wait when the signal aborts, without taking a slot', async () => {
    const slots = new ContactTurnSlots(() => 1);
    const stop = new AbortController();
    const first = await slots.acquire(stop.signal);
    let waited = false;
    const second = slots.acquire(stop.signal).then((release) => {
      waited = true;
      return release;
    });
    await tick();
    expect(waited).toBe(false);
    stop.abort();
    (await second)();
    expect(waited).toBe(true);
    expect(slots.inUse).toBe(1);
    first();
    expect(slots.inUse).toBe(0);
    // Aborted already: nothing is taken.
    (await slots.acquire(stop.signal))();
    expect(slots.inUse).toBe(0);
  });

  it('many contacts wait on the channel’s stop signal, without Node’s leak warning; the stop frees them all', async () => {
    const stop = contactsStopController();
    // Node warns past this many listeners on one signal (10 by default).
    expect(getMaxListeners(stop.signal)).toBe(Infinity);
    expect(getMaxListeners(new AbortController().signal)).toBe(10);
    const slots = new ContactTurnSlots(() => 1);
    const first = await slots.acquire(stop.signal);
    const waiting = Array.from({ length: 30 }, () =>
      slots.acquire(stop.signal),
    );
    await tick();
    stop.abort();
    await Promise.all(waiting);
    first();
    expect(slots.inUse).toBe(0);
  });
});

import {
  QUIET_CHECK_MS,
  QUIET_MAX_WAIT_MS,
  atQuietMoment,
  eventLoopUse,
} from './quiet-moment';

describe('atQuietMoment', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** A reader that answers the given uses in turn (the last one from then on), counting its calls. */
  function readings(...uses: number[]) {
    const read = jest.fn(() =>
      uses.length > 1 ? (uses.shift() as number) : uses[0],
    );
    return read;
  }

  it('runs the task at the first check after the delay when the event loop is quiet', () => {
    const task = jest.fn();
    // The first reading opens the window; the check reads 2 %.
    atQuietMoment(task, 1000, readings(1, 0.02));
    jest.advanceTimersByTime(999);
    expect(task).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(task).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(10_000);
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('waits while the event loop is busy, and runs at the first quiet check', () => {
    const task = jest.fn();
    // Window opened, then busy, busy, 10 % (not under the limit), then 5 %.
    atQuietMoment(task, 1000, readings(0, 1, 0.9, 0.1, 0.05));
    // Checks at 1,000, 1,100 and 1,200 ms find it busy.
    jest.advanceTimersByTime(1000 + 2 * QUIET_CHECK_MS);
    expect(task).not.toHaveBeenCalled();
    jest.advanceTimersByTime(QUIET_CHECK_MS);
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('runs the task after the longest wait when the event loop is never quiet', () => {
    const task = jest.fn();
    atQuietMoment(task, 1000, readings(1));
    jest.advanceTimersByTime(1000 + QUIET_MAX_WAIT_MS - QUIET_CHECK_MS);
    expect(task).not.toHaveBeenCalled();
    jest.advanceTimersByTime(QUIET_CHECK_MS);
    expect(task).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(QUIET_MAX_WAIT_MS);
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('does not count the busy time before the delay ends: the window opens one check before it', () => {
    const task = jest.fn();
    const read = readings(1, 0);
    atQuietMoment(task, 1000, read);
    jest.advanceTimersByTime(1000 - QUIET_CHECK_MS);
    expect(read).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(QUIET_CHECK_MS);
    expect(read).toHaveBeenCalledTimes(2);
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('runs the task after a shorter longest wait when one is given', () => {
    const task = jest.fn();
    atQuietMoment(task, 1000, readings(1), 500);
    jest.advanceTimersByTime(1000 + 500 - QUIET_CHECK_MS);
    expect(task).not.toHaveBeenCalled();
    jest.advanceTimersByTime(QUIET_CHECK_MS);
    expect(task).toHaveBeenCalledTimes(1);
  });

  it('never runs a cancelled task, whether cancelled before the delay ends or while it waits', () => {
    const early = jest.fn();
    atQuietMoment(early, 1000, readings(1, 0))();
    const waiting = jest.fn();
    const cancel = atQuietMoment(waiting, 1000, readings(1));
    jest.advanceTimersByTime(1000 + 3 * QUIET_CHECK_MS);
    cancel();
    jest.advanceTimersByTime(2 * QUIET_MAX_WAIT_MS);
    expect(early).not.toHaveBeenCalled();
    expect(waiting).not.toHaveBeenCalled();
  });

  it('keeps no timer that holds the process open', async () => {
    jest.useRealTimers();
    const made: NodeJS.Timeout[] = [];
    const realSetTimeout = global.setTimeout;
    const spy = jest.spyOn(global, 'setTimeout').mockImplementation(((
      ...args: Parameters<typeof setTimeout>
    ) => {
      const timer = realSetTimeout(...args);
      made.push(timer);
      return timer;
    }) as typeof setTimeout);
    try {
      await new Promise<void>((done) =>
        atQuietMoment(() => done(), 0, readings(1, 0)),
      );
    } finally {
      spy.mockRestore();
    }
    expect(made).toHaveLength(2);
    for (const timer of made) expect(timer.hasRef()).toBe(false);
  });
});

describe('eventLoopUse', () => {
  it('reads the share of time the event loop was busy since the previous reading', () => {
    const use = eventLoopUse();
    const until = Date.now() + 30;
    while (Date.now() < until) {
      // busy on purpose
    }
    expect(use()).toBeGreaterThan(0.5);
    expect(use()).toBeGreaterThanOrEqual(0);
    expect(use()).toBeLessThanOrEqual(1);
  });
});

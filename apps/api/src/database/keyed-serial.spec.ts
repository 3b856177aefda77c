import { KeyedSerial } from './keyed-serial';

/** A task that records when it starts and ends, and ends when told to. */
function gate(log: string[], name: string) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const task = async (): Promise<string> => {
    log.push(`${name} start`);
    await opened;
    log.push(`${name} end`);
    return name;
  };
  return { task, open };
}

const ticks = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise(setImmediate);
};

describe('KeyedSerial (one task of a key at a time)', () => {
  it('runs two tasks of one key one after the other, in the order given', async () => {
    const serial = new KeyedSerial();
    const log: string[] = [];
    const a = gate(log, 'a');
    const b = gate(log, 'b');
    const first = serial.run('chat', a.task);
    const second = serial.run('chat', b.task);
    await ticks();
    expect(log).toEqual(['a start']);
    b.open();
    await ticks();
    expect(log).toEqual(['a start']);
    a.open();
    expect(await Promise.all([first, second])).toEqual(['a', 'b']);
    expect(log).toEqual(['a start', 'a end', 'b start', 'b end']);
  });

  it('runs tasks of different keys at once', async () => {
    const serial = new KeyedSerial();
    const log: string[] = [];
    const a = gate(log, 'a');
    const b = gate(log, 'b');
    const both = Promise.all([
      serial.run('one', a.task),
      serial.run('two', b.task),
    ]);
    await ticks();
    expect(log).toEqual(['a start', 'b start']);
    b.open();
    await ticks();
    expect(log).toEqual(['a start', 'b start', 'b end']);
    a.open();
    await both;
  });

  it('starts a task of an idle key in the caller’s tick (no wait added)', () => {
    const serial = new KeyedSerial();
    let started = false;
    void serial.run('chat', async () => {
      started = true;
    });
    expect(started).toBe(true);
  });

  it('a failed task (or one that throws at once) rejects its caller only; the next still runs', async () => {
    const serial = new KeyedSerial();
    const failed = serial.run('chat', async () => {
      throw new Error('refused');
    });
    const thrown = serial.run('chat', () => {
      throw new Error('at once');
    });
    const next = serial.run('chat', async () => 'stored');
    await expect(failed).rejects.toThrow('refused');
    await expect(thrown).rejects.toThrow('at once');
    await expect(next).resolves.toBe('stored');
  });

  it('keeps no entry for a key once its tasks are done', async () => {
    const serial = new KeyedSerial();
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        serial.run(`chat${i % 5}`, async () => i),
      ),
    );
    await ticks();
    expect(serial.busyKeys).toBe(0);
  });
});

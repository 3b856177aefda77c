/**
 * How fast this host runs now: this process's CPU for a fixed piece of work (JSON and string
 * handling, like a turn's), in ms, the best of three. Benches print it beside figures that move with
 * the host, with no goal: on this shared machine the same build's plain turn has measured 3.2 to 5.0
 * ms within one run, and the time to first token at 50 streams twice as long from one hour to the
 * next. About 110 ms on a quiet host (stops 42–43); 160–315 ms when other work shares the cores
 * (stops 45–46).
 */
export function hostSpeedMs(): number {
  const sample = {
    id: 'chatcmpl-0123456789',
    choices: [{ index: 0, delta: { content: ' word' }, finish_reason: null }],
    text: 'Metatron ’s reply — with “quotes”. '.repeat(20),
  };
  let best = Infinity;
  for (let attempt = 0; attempt < 3; attempt++) {
    const before = process.cpuUsage();
    let length = 0;
    for (let i = 0; i < 20_000; i++)
      length += JSON.stringify(JSON.parse(JSON.stringify(sample))).length;
    const used = process.cpuUsage(before);
    if (length === 0) throw new Error('unreachable');
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return best;
}

/** The line a bench prints: the host's speed before and after its timed part. */
export const hostSpeedLine = (beforeMs: number, afterMs: number): string =>
  `host speed (a fixed piece of work in the bench process, lower is faster; ~110 ms on a quiet host; no goal): ${beforeMs.toFixed(0)} ms before, ${afterMs.toFixed(0)} ms after`;

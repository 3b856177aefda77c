// Preloaded into an API process the memory bench starts (`node --expose-gc -r memory-probe.cjs main.js`):
// on the bench's 'measure' message it collects garbage, then waits idle (V8's memory reducer gives back
// the pages a start used after some seconds without work, as in a server between requests), collects
// again and answers with the process's memory and V8's heap spaces, at once and settled.
const { getHeapSpaceStatistics } = require('node:v8');

// Shorter in a smoke run (part of `npm test`), where the figure is not checked.
const IDLE_MS = Number(process.env.BENCH_PROBE_IDLE_MS ?? 12_000);

function sample() {
  return {
    usage: process.memoryUsage(),
    spaces: getHeapSpaceStatistics().map((space) => ({
      name: space.space_name,
      used: space.space_used_size,
      size: space.space_size,
    })),
  };
}

process.on('message', (message) => {
  if (message !== 'measure' || typeof global.gc !== 'function') return;
  global.gc();
  const atOnce = sample();
  setTimeout(() => {
    global.gc();
    process.send?.({ atOnce, ...sample() });
  }, IDLE_MS);
});

// The bench gone (it failed, or was stopped) while this API still runs: nothing will measure or end it.
process.on('disconnect', () => process.exit(0));

// Preloaded into an API process the memory bench starts (`node --expose-gc -r memory-probe.cjs main.js`):
// on the bench's 'measure' message it collects garbage, waits a few idle seconds (V8 gives back the
// pages a start used), collects again and answers with the process's memory and V8's heap spaces.
const { getHeapSpaceStatistics } = require('node:v8');

process.on('message', (message) => {
  if (message !== 'measure' || typeof global.gc !== 'function') return;
  global.gc();
  setTimeout(() => {
    global.gc();
    process.send?.({
      usage: process.memoryUsage(),
      spaces: getHeapSpaceStatistics().map((space) => ({
        name: space.space_name,
        used: space.space_used_size,
        size: space.space_size,
      })),
    });
  }, 3000);
});

/**
 * Preloaded into the server by `npm run bench:gc` (`node --import`), for measurement only: never part of the
 * service. Once a second it prints, on stdout beside V8's GC trace:
 * - `flush-probe <ms> <ms> …`: how long each of the journal's fdatasync calls took (`fs.fdatasyncSync`, which
 *   only the journal's group commit calls, on the event loop: every request in flight waits for it);
 * - `loop-probe <ms>`: the longest the event loop was held in that second (perf_hooks' event loop delay).
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const fdatasyncSync = fs.fdatasyncSync;
let flushes = [];
fs.fdatasyncSync = (fd) => {
  const started = process.hrtime.bigint();
  try {
    return fdatasyncSync(fd);
  } finally {
    flushes.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
};
// The journal's `import { fdatasyncSync } from 'node:fs'` sees the timed one.
syncBuiltinESMExports();

const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();
setInterval(() => {
  let lines = `loop-probe ${(loop.max / 1e6).toFixed(1)}\n`;
  if (flushes.length > 0) lines += `flush-probe ${flushes.map((ms) => ms.toFixed(3)).join(' ')}\n`;
  process.stdout.write(lines);
  loop.reset();
  flushes = [];
}, 1000).unref();

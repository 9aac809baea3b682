/**
 * What one durable commit costs this machine's disk, measured as the JSON store's journal commits: a 300-byte
 * line written into a file already zero-filled ahead (the store's journal), then fdatasync. A sequential
 * caller such as MCP over stdio waits for one per call, so this bounds its calls a second; it moves from day
 * to day on these machines, and the benchmark records it with every run.
 */
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { makeTempDir } from '../shared/cleanup.js';
import { median, percentile } from '../shared/stats.js';

export interface DiskSync {
  /** Commits measured. */
  commits: number;
  medianUs: number;
  p90Us: number;
}

export async function measureDiskSync(commits = 2_000): Promise<DiskSync> {
  const { dir, remove } = await makeTempDir('disk-sync');
  const line = Buffer.from(`${'x'.repeat(299)}\n`);
  const fd = openSync(path.join(dir, 'journal'), 'w+');
  try {
    writeSync(fd, Buffer.alloc(commits * line.length + 4096));
    fdatasyncSync(fd);
    const us: number[] = [];
    for (let i = 0; i < commits; i++) {
      const started = performance.now();
      writeSync(fd, line, 0, line.length, i * line.length);
      fdatasyncSync(fd);
      us.push((performance.now() - started) * 1000);
    }
    us.sort((a, b) => a - b);
    return { commits, medianUs: Math.round(median(us)), p90Us: Math.round(percentile(us, 90)) };
  } finally {
    closeSync(fd);
    await remove();
  }
}

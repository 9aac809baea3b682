/**
 * V8 CPU profiles summarised: self time by function, by file, and by part (what `pg` does, what our code does,
 * what Node does for them). Used by `npm run bench:profile` (a server under `--cpu-prof`) and by
 * `BENCH_PG_PROFILE=on npm run bench:postgres-statements` (the process itself, profiled around each measurement).
 */
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { ROOT } from './build.mjs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function shortUrl(url: string): string {
  if (url === '') return '(native)';
  const cleaned = url.replace(/^file:\/\//, '');
  const inModules = cleaned.lastIndexOf('node_modules/');
  if (inModules >= 0) return cleaned.slice(inModules + 'node_modules/'.length);
  return cleaned.startsWith(ROOT) ? path.relative(ROOT, cleaned) : cleaned;
}

/**
 * The part of the process a frame belongs to. Native frames and Node's own JavaScript are split by what they
 * are for: the collector, sockets and streams, timers and the microtask queue (promises), the rest.
 */
export function partOf(file: string, functionName: string): string {
  if (file === '(native)') {
    if (functionName === '(garbage collector)') return 'garbage collector';
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(program)') return 'V8 and Node, not attributed';
    return 'native functions (JSON, Buffer, crypto…)';
  }
  if (file.startsWith('pg-protocol/')) return 'pg-protocol: parsing and writing messages';
  if (file.startsWith('pg-types/') || file.startsWith('postgres-')) return 'pg-types: decoding values';
  if (file.startsWith('pg-pool/')) return 'pg-pool: checkout and release';
  if (file.startsWith('pg/')) return 'pg: client, queries, rows';
  if (file.startsWith('src/store/postgres/')) return 'ours: the PostgreSQL store';
  if (file.startsWith('src/core/')) return 'ours: the core';
  if (file.startsWith('src/')) return 'ours: elsewhere in src';
  if (file.startsWith('bench/')) return 'the benchmark’s loop';
  if (
    file.startsWith('node:internal/process/task_queues') ||
    file.startsWith('node:internal/process/promises')
  )
    return 'Node: microtasks and promises';
  if (file.startsWith('node:internal/timers') || file === 'node:timers') return 'Node: timers, setImmediate';
  if (
    file.startsWith('node:net') ||
    file.startsWith('node:internal/stream') ||
    file.startsWith('node:stream')
  )
    return 'Node: sockets and streams';
  if (file.startsWith('node:')) return 'Node: other';
  return `other: ${file.split('/')[0]}`;
}

/** Self time in ms by "function (file:line)", by file and by part, from the sampled profile. */
export function summarise(profile: CpuProfile): {
  byFunction: Map<string, number>;
  byFile: Map<string, number>;
  byPart: Map<string, number>;
} {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  const byPart = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, ms: number) => map.set(key, (map.get(key) ?? 0) + ms);
  profile.samples.forEach((id, index) => {
    const node = nodes.get(id);
    if (!node) return;
    const ms = (profile.timeDeltas[index] ?? 0) / 1000;
    const file = shortUrl(node.callFrame.url);
    const part = partOf(file, node.callFrame.functionName);
    if (part === 'idle') return;
    add(
      byFunction,
      `${node.callFrame.functionName || '(anonymous)'} (${file}:${node.callFrame.lineNumber + 1})`,
      ms,
    );
    add(byFile, file, ms);
    add(byPart, part, ms);
  });
  return { byFunction, byFile, byPart };
}

/** The heaviest rows of a summary, with their share and, given `per`, their µs per operation. */
export function table(title: string, rows: Map<string, number>, top: number, per?: number): string {
  const total = [...rows.values()].reduce((sum, ms) => sum + ms, 0);
  const lines = [...rows]
    .sort(([, a], [, b]) => b - a)
    .slice(0, top)
    .map(
      ([name, ms]) =>
        `${((100 * ms) / total).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(6)} ms` +
        (per ? `  ${((ms * 1000) / per).toFixed(1).padStart(6)} µs/op` : '') +
        `  ${name}`,
    );
  const head = per ? `, ${((total * 1000) / per).toFixed(0)} µs per operation` : '';
  return [`${title} (total ${total.toFixed(0)} ms${head})`, ...lines].join('\n');
}

/** Profiles this process while `work` runs (sampling every 100 µs) and answers its profile. */
export async function profiled<T>(work: () => Promise<T>): Promise<{ result: T; profile: CpuProfile }> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
    const result = await work();
    const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile };
    return { result, profile };
  } finally {
    session.disconnect();
  }
}

/**
 * What processes use, on Linux, from /proc: processor time (/proc/<pid>/stat, utime + stime) of a benchmark's
 * server or of a PostgreSQL cluster (its postmaster and the postmaster's children) over a load, so that a figure
 * per operation can be given beside the throughput (elsewhere, with no /proc, it reads 0); and resident memory.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/** Processor seconds used so far by each process that `wanted` picks (by pid and parent's pid). */
export function cpuSeconds(wanted: (pid: number, parent: number) => boolean): Map<number, number> {
  const seconds = new Map<number, number>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return seconds;
  }
  for (const entry of entries) {
    if (!/^\d+$/u.test(entry)) continue;
    try {
      const fields = (readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1] as string).split(' ');
      if (!wanted(Number(entry), Number(fields[1]))) continue;
      seconds.set(Number(entry), (Number(fields[11]) + Number(fields[12])) / 100); // utime + stime, in ticks
    } catch {
      // the process ended meanwhile
    }
  }
  return seconds;
}

/** Processor seconds used between two readings (a process gone by the second counts nothing). */
export function used(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, seconds] of after) sum += seconds - (before.get(pid) ?? 0);
  return sum;
}

/** The processes of a PostgreSQL cluster: its postmaster (from `<dir>/data/postmaster.pid`) and its children. */
export function clusterProcesses(clusterDir: string): (pid: number, parent: number) => boolean {
  const postmaster = Number(readFileSync(`${clusterDir}/data/postmaster.pid`, 'utf8').split('\n')[0]);
  return (pid, parent) => pid === postmaster || parent === postmaster;
}

/** VmRSS and VmHWM (peak) of a live process, in MiB. */
export async function residentMemory(pid: number): Promise<{ rssMb: number; peakMb: number } | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))?.[1]);
    return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

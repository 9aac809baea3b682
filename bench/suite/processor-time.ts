/**
 * The processor time per 2xx response of a load's server processes (and of the database's), measured around the
 * load from /proc: the figure beside the throughput in the report's processor-time table.
 */
import type { HttpResult } from '../http/load.js';
import { cpuSeconds, used } from '../shared/process-usage.js';

/**
 * `load`, with the processor time per 2xx response of the `server` processes (and of the database's processes,
 * picked by `database`) over it: their time over the call's wall time (warm-up included), over the ops/s.
 */
export async function withCpu(
  load: () => Promise<HttpResult>,
  server: readonly number[],
  database?: (pid: number, parent: number) => boolean,
): Promise<HttpResult> {
  const ofServer = (pid: number) => server.includes(pid);
  const before = { server: cpuSeconds(ofServer), database: database && cpuSeconds(database) };
  const started = performance.now();
  const result = await load();
  const wall = (performance.now() - started) / 1000;
  const perOp = (seconds: number) => (seconds / wall / result.opsPerSec) * 1e6;
  return {
    ...result,
    cpu: {
      serverUs: perOp(used(before.server, cpuSeconds(ofServer))),
      ...(database && before.database
        ? { databaseUs: perOp(used(before.database, cpuSeconds(database))) }
        : {}),
    },
  };
}

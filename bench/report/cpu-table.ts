/**
 * The report's processor-time table: for the rows measured with it (suite/processor-time.ts), the server's and the
 * database's processor time per 2xx response, the median of the rounds and each round's.
 */
import type { HttpResult } from '../http/load.js';
import { formatNumber } from '../shared/number-format.js';
import { median } from '../shared/stats.js';

/** The table after a blank line and a paragraph on how it was measured; nothing when no row has it. */
export function cpuTable(rows: readonly HttpResult[][]): string[] {
  const withCpu = rows.filter((rs) => rs.some((x) => x.cpu));
  if (withCpu.length === 0) return [];
  const lines = [
    '',
    'Processor time per 2xx response, µs (the median of the rounds, each round after it): of the server process ' +
      '(the instance, or the ceiling), and of the PostgreSQL cluster’s processes together. Each is the processes’ ' +
      'time over the load’s wall time (its warm-up second included) divided by its ops/s.',
    '',
    '| scenario | size | server µs | database µs |',
    '|---|---|---:|---:|',
  ];
  for (const rs of withCpu) {
    const measured = rs.filter((x) => x.cpu);
    const cell = (of: (x: HttpResult) => number | undefined) => {
      const values = measured.map(of).filter((v): v is number => v !== undefined);
      return values.length
        ? `${formatNumber(median(values))} (${values.map((v) => formatNumber(v)).join(', ')})`
        : '—';
    };
    const r = rs[0] as HttpResult;
    const size =
      r.memories !== undefined ? formatNumber(r.memories) : `ceiling, ${formatNumber(r.ceilingFor ?? 0)}`;
    lines.push(
      `| ${r.scenario} | ${size} | ${cell((x) => x.cpu?.serverUs)} | ${cell((x) => x.cpu?.databaseUs)} |`,
    );
  }
  return lines;
}

/** `npm run bench`'s Markdown report, printed at the end of the run: its sections in order. */
import { cpuTable } from './cpu-table.js';
import type { BenchResults } from './results.js';
import { rowsOf } from './rounds.js';
import { setupLines } from './setup-lines.js';
import { httpTable, mcpTable, startupTable, targetsTable } from './tables.js';

export function renderMarkdown(results: BenchResults): string {
  const rows = rowsOf(results.http);
  const lines = [
    ...setupLines(results),
    '',
    ...httpTable(rows, results.settings.rounds),
    ...cpuTable(rows),
    '',
    ...mcpTable(results.mcp),
    '',
    ...startupTable(results.startup),
    '',
    ...targetsTable(results.ratios),
    '',
    'Durability of acknowledgements is not measured here: it is the crash tests’ job.',
  ];
  if (results.problems.length) {
    lines.push('', '**Problems seen:**');
    for (const problem of results.problems) lines.push(`- ${problem}`);
  }
  return lines.join('\n');
}

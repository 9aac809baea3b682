/**
 * `npm run bench`'s results as they come: each load's and MCP phase's result kept and printed as progress, the
 * JSON store's start-up rows, and the problems seen (failed requests or calls, error log lines, bad exits).
 */
import type { HttpResult } from '../http/load.js';
import type { McpResult } from '../mcp/sequential-calls.js';
import type { StartupResult } from '../report/results.js';
import { formatNumber } from '../shared/number-format.js';
import { progress } from './progress.js';

export class Collector {
  readonly http: HttpResult[] = [];
  readonly mcp: McpResult[] = [];
  readonly startup: StartupResult[] = [];
  readonly problems: string[] = [];

  /** An HTTP load's result; its non-2xx responses and errors a problem. */
  note(result: HttpResult): void {
    this.http.push(result);
    progress(
      `  [${result.round}] ${result.scenario}: ${formatNumber(result.opsPerSec)} ops/s, p50 ${result.p50} ms, p99 ${result.p99} ms` +
        (result.non2xx || result.errors ? `, non-2xx ${result.non2xx}, errors ${result.errors}` : ''),
    );
    if (result.non2xx || result.errors) {
      this.problems.push(
        `${result.scenario} @${formatNumber(result.memories ?? result.ceilingFor ?? 0)}, round ${result.round}: ` +
          `${result.non2xx} non-2xx responses (${JSON.stringify(result.statusCodes)}), ${result.errors} errors ` +
          `(${result.timeouts} timeouts) of ${result.requests} requests.`,
      );
    }
  }

  /** An MCP phase's result (printed with its round when `withRound`); its failed calls a problem. */
  noteMcp(result: McpResult, withRound: boolean): void {
    this.mcp.push(result);
    progress(
      `  ${withRound ? `[${result.round}] ` : ''}${result.scenario}: ${formatNumber(result.opsPerSec)} calls/s, p99 ${result.p99.toFixed(2)} ms`,
    );
    if (result.errors)
      this.problems.push(
        `${result.scenario}: ${result.errors} of ${result.calls} calls failed; first: ${result.firstError}`,
      );
  }
}

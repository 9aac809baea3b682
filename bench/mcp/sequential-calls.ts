/**
 * MCP calls one at a time (sequentially), as a desktop client makes them: first for a short warm-up, then for
 * `seconds`, each timed.
 */
import { percentile } from '../shared/stats.js';

export interface McpResult {
  scenario: string;
  /** Which round (1..BENCH_ROUNDS); the peer is measured once, as round 1. */
  round: number;
  /** Size of the server's data when the phase started (memories, or graph entities). */
  size: number;
  opsPerSec: number;
  p50: number;
  p99: number;
  max: number;
  calls: number;
  errors: number;
  firstError?: string;
  seconds: number;
}

export type CallOutcome = { [field: string]: unknown; isError?: unknown; content?: unknown };

function errorText(result: CallOutcome): string {
  const content = result.content as Array<{ type: string; text?: string }> | undefined;
  return content?.map((part) => part.text ?? '').join(' ') ?? 'isError';
}

/** Calls `call(i)` one after another for `seconds` (after `warmupSeconds` of the same) and times each. */
export async function sequential(
  scenario: string,
  round: number,
  size: number,
  seconds: number,
  warmupSeconds: number,
  call: (i: number) => Promise<CallOutcome>,
): Promise<McpResult> {
  let i = 0;
  const warmupUntil = performance.now() + warmupSeconds * 1000;
  while (performance.now() < warmupUntil) {
    const result = await call(i++);
    if (result.isError) throw new Error(`${scenario} failed during warm-up: ${errorText(result)}`);
  }
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const until = started + seconds * 1000;
  let now = started;
  while (now < until) {
    const before = now;
    let outcome: CallOutcome;
    try {
      outcome = await call(i++);
    } catch (err) {
      outcome = { isError: true, content: [{ type: 'text', text: (err as Error).message }] };
    }
    now = performance.now();
    latencies.push(now - before);
    if (outcome.isError) {
      errors++;
      firstError ??= errorText(outcome).slice(0, 300);
    }
  }
  const elapsed = (now - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    scenario,
    round,
    size,
    opsPerSec: (latencies.length - errors) / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? Number.NaN,
    calls: latencies.length,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    seconds: elapsed,
  };
}

/**
 * HTTP load with autocannon (in this process; the servers run in their own processes): one scenario at a
 * time, a short warm-up, then `seconds` at `connections`. Requests can vary per request through
 * `setupRequest` (body, path and X-API-Key), so load spreads over many agents and keys (requests.ts).
 */
import autocannon, { type AutocannonRequest, type AutocannonResult } from 'autocannon';

export interface LoadSettings {
  seconds: number;
  warmupSeconds: number;
  connections: number;
}

export interface HttpResult {
  scenario: string;
  /** Memories in the store (undefined for the bare Express ceiling). */
  memories?: number;
  /** For the ceiling: the store size whose scenarios it was measured right before (ratios pair them). */
  ceilingFor?: number;
  /** Which round (1..BENCH_ROUNDS): a ratio pairs a scenario with the ceiling of the same round. */
  round: number;
  /** 2xx responses per second over the measured window: the throughput that counts. */
  opsPerSec: number;
  /** Every response per second (autocannon's "Req/Sec" average), errors included. */
  reqPerSecAll: number;
  /** Latency of 2xx responses, ms (autocannon records only those). */
  p50: number;
  p99: number;
  max: number;
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  seconds: number;
  /**
   * A load split over several instances (loadParallel): each instance's own ops/s, p50 and p99, in instance
   * order. The result's ops/s and counts are their sums, its latencies the largest of theirs.
   */
  instances?: { url: string; connections: number; opsPerSec: number; p50: number; p99: number }[];
  /**
   * Processor time per 2xx response, µs, where measured (suite/processor-time.ts): of the server's processes, and of
   * the database's. The processes' time over the whole load (its warm-up included) over its wall time, divided
   * by the ops/s of the measured window.
   */
  cpu?: { serverUs: number; databaseUs?: number };
}

export async function load(
  scenario: string,
  url: string,
  requests: AutocannonRequest[],
  settings: LoadSettings,
  tags: { memories?: number; ceilingFor?: number; round: number },
): Promise<HttpResult> {
  const result: AutocannonResult = await autocannon({
    url,
    connections: settings.connections,
    duration: settings.seconds,
    requests,
    ...(settings.warmupSeconds > 0
      ? { warmup: { connections: settings.connections, duration: settings.warmupSeconds } }
      : {}),
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {}))
    statusCodes[code] = Number(count);
  const seconds = (result.finish.getTime() - result.start.getTime()) / 1000 || result.duration;
  const ok = result['2xx'];
  return {
    scenario,
    ...tags,
    opsPerSec: ok / seconds,
    reqPerSecAll: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    requests: result.requests.total,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    seconds,
  };
}

/**
 * One scenario against several instances at once: one autocannon load per instance, all started together
 * (in this process, as `load`), `settings.connections` split between them (25 each of 50 for two). The
 * result's throughput, requests and failures are the sums of the instances'; its p50, p99 and max are the
 * largest of theirs (latency histograms cannot be merged from autocannon's summaries, and the larger
 * instance's figure is the one a client may meet). Each instance's figures are kept in `instances`.
 */
export async function loadParallel(
  scenario: string,
  targets: readonly { url: string; requests: AutocannonRequest[] }[],
  settings: LoadSettings,
  tags: { memories?: number; ceilingFor?: number; round: number },
): Promise<HttpResult> {
  const connectionsOf = (i: number) =>
    Math.floor(settings.connections / targets.length) + (i < settings.connections % targets.length ? 1 : 0);
  const parts = await Promise.all(
    targets.map((target, i) =>
      load(scenario, target.url, target.requests, { ...settings, connections: connectionsOf(i) }, tags),
    ),
  );
  const sum = (pick: (r: HttpResult) => number) => parts.reduce((n, r) => n + pick(r), 0);
  const most = (pick: (r: HttpResult) => number) => Math.max(...parts.map(pick));
  const statusCodes: Record<string, number> = {};
  for (const part of parts)
    for (const [code, n] of Object.entries(part.statusCodes))
      statusCodes[code] = (statusCodes[code] ?? 0) + n;
  return {
    scenario,
    ...tags,
    opsPerSec: sum((r) => r.opsPerSec),
    reqPerSecAll: sum((r) => r.reqPerSecAll),
    p50: most((r) => r.p50),
    p99: most((r) => r.p99),
    max: most((r) => r.max),
    requests: sum((r) => r.requests),
    ok: sum((r) => r.ok),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    statusCodes,
    seconds: most((r) => r.seconds),
    instances: parts.map((r, i) => ({
      url: targets[i]?.url ?? '',
      connections: connectionsOf(i),
      opsPerSec: r.opsPerSec,
      p50: r.p50,
      p99: r.p99,
    })),
  };
}

/**
 * The operator's metrics in Prometheus' text format (prom-client), served at /metrics (src/http/
 * metrics-route.ts): requests by face, operation and outcome with their latency; cents charged by
 * operation; live-data answers by how they were served (cache hits and misses, single-flight joins, stale
 * answers) and upstream calls by provider and outcome; each provider's breaker and token bucket; store
 * transaction latency and the JSON store's journal or PostgreSQL's pool; and the process's own metrics.
 *
 * One registry per service (not prom-client's global one), so that several services in one process (tests)
 * never mix. Everything is pushed by the faces and the live-data chains as it happens, except the figures
 * read at scrape time (breakers, buckets, store figures).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { LiveDataSource, ProviderCall } from '../core/live-port.js';
import type { CacheState } from '../core/model.js';
import type { StorePort } from '../core/store-port.js';

/** One request of a face, as the metrics count it. */
export interface RequestObservation {
  face: 'rest' | 'mcp';
  operation: string;
  /** `ok`, or the stable error code of the answer (`invalid_input`, `insufficient_credits`, …). */
  status: string;
  seconds: number;
  /** Cents charged by it (absent or 0: nothing; a replayed answer charged nothing again). */
  costCents?: number;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BREAKER_STATES = ['closed', 'open', 'half-open'] as const;

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'face' | 'operation' | 'status'>;
  private readonly latency: Histogram<'face' | 'operation'>;
  private readonly cents: Counter<'operation'>;
  private readonly answers: Counter<'cache_state'>;
  private readonly upstream: Counter<'chain' | 'provider' | 'outcome'>;
  private readonly upstreamLatency: Histogram<'chain' | 'provider'>;
  private readonly transactions: Histogram;

  constructor(store: StorePort, live: () => LiveDataSource | undefined) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'ac_requests_total',
      help: 'Requests by face (rest, mcp), operation and outcome (ok or the error code).',
      labelNames: ['face', 'operation', 'status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'ac_request_duration_seconds',
      help: 'Time to answer a request, by face and operation.',
      labelNames: ['face', 'operation'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.cents = new Counter({
      name: 'ac_cents_charged_total',
      help: 'Cents charged by operation (charges the unlimited plan covers included).',
      labelNames: ['operation'],
      registers,
    });
    this.answers = new Counter({
      name: 'ac_live_answers_total',
      help: 'Live-data answers by cache_state: fresh (a cache miss, fetched), hit, stale, shared_flight (joined a fetch in flight).',
      labelNames: ['cache_state'],
      registers,
    });
    this.upstream = new Counter({
      name: 'ac_upstream_calls_total',
      help: 'Calls to live-data providers by chain, provider and outcome (ok, empty, not_found, failed, timeout).',
      labelNames: ['chain', 'provider', 'outcome'],
      registers,
    });
    this.upstreamLatency = new Histogram({
      name: 'ac_upstream_call_duration_seconds',
      help: 'Duration of calls to live-data providers.',
      labelNames: ['chain', 'provider'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.transactions = new Histogram({
      name: 'ac_store_transaction_duration_seconds',
      help: 'Store transactions from start to durable commit (or failure).',
      buckets: LATENCY_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'ac_provider_breaker_state',
      help: "Each provider's circuit breaker: 1 for the state it is in, 0 for the others.",
      labelNames: ['chain', 'provider', 'state'],
      registers,
      collect() {
        this.reset();
        for (const provider of live()?.status?.() ?? []) {
          for (const state of BREAKER_STATES) {
            this.set(
              { chain: provider.chain, provider: provider.id, state },
              provider.breaker === state ? 1 : 0,
            );
          }
        }
      },
    });
    new Gauge({
      name: 'ac_provider_tokens',
      help: "Tokens left in each provider's bucket (calls it may make now).",
      labelNames: ['chain', 'provider'],
      registers,
      collect() {
        this.reset();
        for (const provider of live()?.status?.() ?? []) {
          this.set({ chain: provider.chain, provider: provider.id }, provider.tokens.available);
        }
      },
    });
    new Gauge({
      name: 'ac_store_journal_bytes',
      help: 'JSON file store: bytes of journal since the last snapshot.',
      registers,
      collect() {
        this.set(store.stats().journalBytes ?? 0);
      },
    });
    new Gauge({
      name: 'ac_store_pool_connections',
      help: "PostgreSQL: this instance's pool connections by state (total, idle, waiting requests).",
      labelNames: ['state'],
      registers,
      collect() {
        const pool = store.stats().pool;
        this.reset();
        if (!pool) return;
        this.set({ state: 'total' }, pool.total);
        this.set({ state: 'idle' }, pool.idle);
        this.set({ state: 'waiting' }, pool.waiting);
      },
    });
  }

  request(observed: RequestObservation): void {
    this.requests.inc({ face: observed.face, operation: observed.operation, status: observed.status });
    this.latency.observe({ face: observed.face, operation: observed.operation }, observed.seconds);
    if (observed.costCents) this.cents.inc({ operation: observed.operation }, observed.costCents);
  }

  liveAnswer(state: CacheState): void {
    this.answers.inc({ cache_state: state });
  }

  upstreamCall(call: ProviderCall): void {
    this.upstream.inc({ chain: call.chain, provider: call.provider, outcome: call.outcome });
    this.upstreamLatency.observe({ chain: call.chain, provider: call.provider }, call.seconds);
  }

  storeTransaction(seconds: number): void {
    this.transactions.observe(seconds);
  }
}

/** The store with each transaction timed (every other method as it is). */
export function timedStore(store: StorePort, observe: (seconds: number) => void): StorePort {
  const transact: StorePort['transact'] = async (work) => {
    const started = process.hrtime.bigint();
    try {
      return await store.transact(work);
    } finally {
      observe(Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === 'transact') return transact;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * GET /metrics: Prometheus' text format behind AC_METRICS_TOKEN, parsed by a Prometheus text parser, with
 * values that move as requests are made over REST and MCP: requests by face, operation and outcome with
 * their latency, cents charged, live-data answers by cache_state, store transactions, process metrics.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import parsePrometheus, { type ParsedFamily } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { ON_POSTGRES, startTestServer, type TestServer } from '../helpers/test-server.js';

const TOKEN = 'metrics-token-for-tests-0123456789';

describe('GET /metrics', () => {
  let server: TestServer;
  const live = new FakeLiveSource();

  beforeAll(async () => {
    server = await startTestServer({ live, env: { AC_METRICS_TOKEN: TOKEN } });
  });
  afterAll(() => server.close());

  let lastText = '';
  const scrape = async (): Promise<Map<string, ParsedFamily>> => {
    const res = await server.request('GET', '/metrics', { bearer: TOKEN });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/u);
    lastText = res.text;
    return new Map(parsePrometheus(res.text).map((family) => [family.name, family]));
  };
  /**
   * A labelled histogram's sample count, read from the text: the parser folds the series of a labelled
   * histogram into one, so their `_count` lines are read directly.
   */
  const histogramCount = (name: string, labels: string) =>
    Number(new RegExp(`^${name}_count\\{${labels}\\} (\\d+)$`, 'mu').exec(lastText)?.[1] ?? 0);
  /** The value of the sample of `name` whose labels include `labels` (0 when there is none yet). */
  const value = (families: Map<string, ParsedFamily>, name: string, labels: Record<string, string> = {}) => {
    const sample = families
      .get(name)
      ?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
    return Number(sample?.value ?? sample?.count ?? 0);
  };

  it('needs the token: none or a wrong one is a JSON 401', async () => {
    for (const bearer of [undefined, 'wrong-token-wrong-token']) {
      const res = await server.request('GET', '/metrics', bearer === undefined ? {} : { bearer });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'unauthorized' });
      expect(res.body.error).toMatch(/AC_METRICS_TOKEN/u);
    }
  });

  it('counts REST requests, their outcome, latency and the cents they charged', async () => {
    const before = await scrape();
    const key = await server.register();
    const store = (memoryKey: string) =>
      server.request('POST', '/api/ac/memory', {
        key,
        body: { agent_key: key, memory_key: memoryKey, memory_value: 'v' },
      });
    await store('one');
    await store('two');
    await server.request('POST', '/api/ac/memory', { key, body: { agent_key: key, memory_key: '' } });
    const after = await scrape();
    const stored = { face: 'rest', operation: 'memory_store', status: 'ok' };
    expect(value(after, 'ac_requests_total', stored) - value(before, 'ac_requests_total', stored)).toBe(2);
    const refused = { face: 'rest', operation: 'memory_store', status: 'invalid_input' };
    expect(value(after, 'ac_requests_total', refused) - value(before, 'ac_requests_total', refused)).toBe(1);
    const charged = { operation: 'memory_store' };
    expect(
      value(after, 'ac_cents_charged_total', charged) - value(before, 'ac_cents_charged_total', charged),
    ).toBe(2);
    expect(after.get('ac_request_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(
      histogramCount('ac_request_duration_seconds', 'face="rest",operation="memory_store"'),
    ).toBeGreaterThanOrEqual(3);
    // Every charge and registration is a store transaction; the JSON store's journal grows.
    expect(Number(after.get('ac_store_transaction_duration_seconds')?.metrics[0]?.count)).toBeGreaterThan(
      Number(before.get('ac_store_transaction_duration_seconds')?.metrics[0]?.count ?? 0),
    );
    // The store's own figure: PostgreSQL's pool, or the JSON store's journal.
    if (ON_POSTGRES) expect(value(after, 'ac_store_pool_connections', { state: 'total' })).toBeGreaterThan(0);
    else
      expect(value(after, 'ac_store_journal_bytes')).toBeGreaterThan(value(before, 'ac_store_journal_bytes'));
    // Process metrics are there too.
    expect(value(after, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(after.has('nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('counts live-data answers by how they were served', async () => {
    const key = await server.register();
    const before = await scrape();
    const data = () =>
      server.request('POST', '/api/ac/data', {
        key,
        body: { agent_key: key, query_type: 'news', query: 'metrics' },
      });
    await data();
    await data();
    await data();
    const after = await scrape();
    const delta = (state: string) =>
      value(after, 'ac_live_answers_total', { cache_state: state }) -
      value(before, 'ac_live_answers_total', { cache_state: state });
    expect(delta('fresh')).toBe(1);
    expect(delta('hit')).toBe(2);
    const charged = { operation: 'data' };
    expect(
      value(after, 'ac_cents_charged_total', charged) - value(before, 'ac_cents_charged_total', charged),
    ).toBe(2);
  });

  it('counts MCP tool calls under face mcp', async () => {
    const key = await server.register();
    const before = await scrape();
    const client = new Client({ name: 'metrics-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { 'X-API-Key': key } },
      }),
    );
    try {
      await client.callTool({
        name: 'memory_store',
        arguments: { memory_key: 'via-mcp', memory_value: 'v' },
      });
      await client.callTool({ name: 'memory_retrieve', arguments: { memory_key: 'absent' } });
    } finally {
      await client.close();
    }
    const after = await scrape();
    const delta = (labels: Record<string, string>) =>
      value(after, 'ac_requests_total', labels) - value(before, 'ac_requests_total', labels);
    expect(delta({ face: 'mcp', operation: 'memory_store', status: 'ok' })).toBe(1);
    // The transport's own HTTP requests are not counted again as REST requests.
    expect(
      after
        .get('ac_requests_total')
        ?.metrics.filter((m) => m.labels?.face === 'rest' && m.labels.operation === 'other'),
    ).toEqual(
      before
        .get('ac_requests_total')
        ?.metrics.filter((m) => m.labels?.face === 'rest' && m.labels.operation === 'other') ?? [],
    );
    expect(delta({ face: 'mcp', operation: 'memory_retrieve', status: 'not_found' })).toBe(1);
    expect(
      value(after, 'ac_cents_charged_total', { operation: 'memory_store' }) -
        value(before, 'ac_cents_charged_total', { operation: 'memory_store' }),
    ).toBe(1);
  });
});

describe('GET /metrics without AC_METRICS_TOKEN', () => {
  it('is not served', async () => {
    const server = await startTestServer();
    try {
      expect((await server.request('GET', '/metrics')).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});

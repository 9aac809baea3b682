/**
 * `npm run bench:metrics`: what counting requests for /metrics costs. Two servers of the built CLI on JSON
 * stores of their own, one with AC_METRICS_TOKEN (every request counted) and one without (the default), are
 * loaded in turn with the same charged retrieve (the spec's hottest memory read) and the free ping, for
 * BENCH_ROUNDS rounds, so each pair is measured side by side in the same round; the ratio on/off is the
 * figure (the machine's speed moves between runs, the ratio much less).
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import autocannon from 'autocannon';
import { BUILT_CLI } from '../shared/build.mjs';
import { makeTempDir, runMain } from '../shared/cleanup.js';
import { freePort, spawnWithLog } from '../shared/processes.js';
import { BENCH_ADMIN_TOKEN, postJson, unlimitedAgent } from '../shared/rest-client.js';
import { envNumber } from '../shared/settings.js';

const rounds = envNumber('BENCH_ROUNDS', 3, 1);
const seconds = envNumber('BENCH_SECONDS', 5, 0);
const connections = envNumber('BENCH_CONNECTIONS', 10, 1);

/**
 * `serve` on a JSON store of its own with warnings only in its log (no line per request, and so no line when it
 * listens: ready once ping answers), on the unlimited plan an agent holding one memory.
 */
async function start(metrics: boolean) {
  const { dir, remove } = await makeTempDir('metrics');
  const dataDir = path.join(dir, 'data');
  await mkdir(dataDir);
  const port = await freePort();
  const server = spawnWithLog({
    name: `agent-context serve (metrics ${metrics ? 'on' : 'off'})`,
    args: [BUILT_CLI, 'serve', '--port', String(port)],
    env: {
      ...process.env,
      AC_RATE_LIMIT: 'off',
      DATA_DIR: dataDir,
      AC_LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      AC_ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
      ...(metrics ? { AC_METRICS_TOKEN: 'bench-metrics-token-0123456789' } : {}),
    },
    logFile: path.join(dir, 'server.log'),
    probeUrl: `http://127.0.0.1:${port}/api/ac/ping`,
  });
  const { url } = await server.ready;
  // On the unlimited plan, so that every retrieve of the load is charged and answered (never a 402).
  const key = await unlimitedAgent(url, `bench-${metrics ? 'on' : 'off'}@example.com`);
  await postJson(
    url,
    '/api/ac/memory',
    { agent_key: key, memory_key: 'bench', memory_value: 'x'.repeat(200) },
    { 'x-api-key': key },
  );
  return { url, key, stop: () => server.stop().then(remove) };
}

async function rate(url: string, headers: Record<string, string>): Promise<number> {
  const result = await autocannon({ url, connections, duration: seconds, headers });
  return Math.round(result.requests.average);
}

async function main(): Promise<void> {
  const off = await start(false);
  const on = await start(true);
  const rows: string[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const [name, pathOf] of [
      ['ping', () => '/api/ac/ping'],
      ['retrieve', (key: string) => `/api/ac/memory?agent_key=${key}&memory_key=bench`],
    ] as const) {
      const offRate = await rate(`${off.url}${pathOf(off.key)}`, { 'x-api-key': off.key });
      const onRate = await rate(`${on.url}${pathOf(on.key)}`, { 'x-api-key': on.key });
      rows.push(`| ${round} | ${name} | ${offRate} | ${onRate} | ${(onRate / offRate).toFixed(2)} |`);
    }
  }
  console.log('| round | request | metrics off (req/s) | metrics on (req/s) | on ÷ off |');
  console.log('|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  for (const server of [off, on]) await server.stop();
}

await runMain('bench:metrics', main);

/**
 * `npm run bench:metrics`: what counting requests for /metrics costs. Two servers of the built CLI on JSON
 * stores of their own, one with AC_METRICS_TOKEN (every request counted) and one without (the default), are
 * loaded in turn with the same charged retrieve (the spec's hottest memory read) and the free ping, for
 * BENCH_ROUNDS rounds, so each pair is measured side by side in the same round; the ratio on/off is the
 * figure (the machine's speed moves between runs, the ratio much less).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { CLI } from '../test/helpers/spawn-serve.js';

/** A free loopback port. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** `serve` with warnings only in its log (no line per request), ready once ping answers. */
async function spawnQuiet(env: Record<string, string>) {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'serve', '--port', String(port)], {
    env: { ...process.env, AC_RATE_LIMIT: 'off', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    try {
      if ((await fetch(`${url}/api/ac/ping`)).ok) break;
    } catch {
      if (tries > 200) throw new Error('the server did not start');
    }
    await sleep(50);
  }
  return { child, url, exited };
}

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ADMIN = 'bench-admin-token-0123456789';

async function start(metrics: boolean) {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'ac-bench-metrics-'));
  const server = await spawnQuiet({
    DATA_DIR: dataDir,
    AC_LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    AC_ADMIN_TOKEN: ADMIN,
    ...(metrics ? { AC_METRICS_TOKEN: 'bench-metrics-token-0123456789' } : {}),
  });
  const registered = await fetch(`${server.url}/api/ac/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `bench-${metrics ? 'on' : 'off'}@example.com` }),
  });
  const key = ((await registered.json()) as { agent_key: string }).agent_key;
  // On the unlimited plan, so that every retrieve of the load is charged and answered (never a 402).
  await fetch(`${server.url}/api/ac/admin/plan`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({ email: `bench-${metrics ? 'on' : 'off'}@example.com`, plan: 'unlimited' }),
  });
  await fetch(`${server.url}/api/ac/memory`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ agent_key: key, memory_key: 'bench', memory_value: 'x'.repeat(200) }),
  });
  return { ...server, key, dataDir };
}

async function rate(url: string, headers: Record<string, string>): Promise<number> {
  const result = await autocannon({ url, connections, duration: seconds, headers });
  return Math.round(result.requests.average);
}

const off = await start(false);
const on = await start(true);
try {
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
} finally {
  for (const server of [off, on]) {
    server.child.kill('SIGTERM');
    await server.exited;
    await rm(server.dataDir, { recursive: true, force: true });
  }
}

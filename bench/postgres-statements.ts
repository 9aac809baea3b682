/**
 * What a charged read's database work costs on PostgreSQL, without HTTP, Express or the core (issue 13):
 * `npm run bench:postgres-statements`. A throwaway cluster with fsync on, 20,000 memories over 1,000 agents,
 * 50 loops sharing a pool of 10 connections; each loop runs what memory_retrieve asks of the store: the key's
 * lookup, then a transaction that locks the account, reads the memory and appends the debit. Two ways:
 *
 * - `store`: the store itself (`PostgresStore`: `read` for the key, `transact` for the rest), whose
 *   transactions are pipelined (src/store/postgres/tx-pipeline.ts): 4 round trips;
 * - `one at a time`: the same statements on plain `pg` connections, each awaited before the next is sent, as
 *   the store sent them before it pipelined: 6 round trips.
 *
 * Each over TCP on loopback and over the cluster's unix socket, and, with BENCH_PG_DELAY_MS=n, over TCP
 * through a relay that holds every chunk n ms each way (a database across a network). It prints
 * transactions a second, and the processor time per transaction of this process (the client side: `pg`
 * and the store) and of the PostgreSQL processes together. BENCH_ROUNDS (3), BENCH_SECONDS (5).
 */
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import pg from 'pg';
import type { LedgerEntry } from '../src/core/model.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { PostgresCluster } from '../test/helpers/postgres-cluster.js';
import { generatePrefill } from './prefill.js';
import { writePostgres } from './prefill-postgres.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const DELAY_MS = Number(process.env.BENCH_PG_DELAY_MS ?? 0);
const LOOPS = 50;
const POOL = 10;

/** Processor seconds used so far by each process that `wanted` picks (by command name and pid). */
function cpuSeconds(wanted: (command: string, pid: number) => boolean): Map<number, number> {
  const seconds = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/u.test(entry)) continue;
    try {
      if (!wanted(readFileSync(`/proc/${entry}/comm`, 'utf8').trim(), Number(entry))) continue;
      const fields = (readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1] as string).split(' ');
      seconds.set(Number(entry), (Number(fields[11]) + Number(fields[12])) / 100); // utime + stime, in ticks
    } catch {
      // the process ended meanwhile
    }
  }
  return seconds;
}
/** Processor seconds used between two readings (a process gone by the second counts nothing). */
function used(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, seconds] of after) sum += seconds - (before.get(pid) ?? 0);
  return sum;
}
const ownCpu = () => cpuSeconds((_, pid) => pid === process.pid);
const postgresCpu = () => cpuSeconds((command) => command.startsWith('postgres'));

/** A relay to `port` that holds every chunk `delayMs` each way; its port. */
async function delayingRelay(port: number, delayMs: number): Promise<number> {
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    const forward = (from: Socket, to: Socket) => {
      from.on('data', (chunk) => setTimeout(() => to.write(chunk), delayMs));
    };
    forward(client, upstream);
    forward(upstream, client);
    for (const socket of [client, upstream]) {
      socket.setNoDelay(true);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  return (server.address() as { port: number }).port;
}

const cluster = await PostgresCluster.start({ fsync: true });
try {
  const tcpUrl = await cluster.createDatabase('agent_context');
  const data = generatePrefill(20_000, 1_000);
  await writePostgres(tcpUrl, data);
  const socketUrl = `postgresql://postgres@localhost/agent_context?host=${encodeURIComponent(cluster.dir)}&port=${cluster.address.port}`;
  const routes: [string, string][] = [
    ['tcp', tcpUrl],
    ['unix socket', socketUrl],
  ];
  if (DELAY_MS > 0) {
    const relayed = new URL(tcpUrl);
    relayed.port = String(await delayingRelay(cluster.address.port, DELAY_MS));
    routes.push([`tcp, ${DELAY_MS} ms each way`, relayed.toString()]);
  }

  const hashes = new Map(data.agents.map((a) => [a.id, createHash('sha256').update(a.key).digest('hex')]));
  const reads = data.agents.flatMap((a) => a.memoryKeys.map((key) => ({ agentId: a.id, key })));
  const pick = () => reads[Math.floor(Math.random() * reads.length)] as (typeof reads)[number];
  const debitOf = (agentId: string, balanceAfterCents: number): LedgerEntry => ({
    id: `txn_${randomUUID()}`,
    agentId,
    at: new Date().toISOString(),
    operation: 'memory_retrieve',
    amountCents: -1,
    balanceAfterCents,
    costCents: 1,
  });

  type Way = (url: string) => { run: () => Promise<void>; close: () => Promise<void> };
  const ways: [string, Way][] = [
    [
      'store',
      (url) => {
        const store = new PostgresStore({ connectionString: url, poolMax: POOL });
        return {
          run: async () => {
            const { agentId, key } = pick();
            await store.read((r) => r.findAccountByKeyHash(hashes.get(agentId) as string));
            await store.transact(async (tx) => {
              const account = await tx.getAccount(agentId);
              await tx.getMemory(agentId, key);
              const after = (account?.balanceCents ?? 0) - 1;
              await tx.appendLedger(debitOf(agentId, after));
            });
          },
          close: () => store.close(),
        };
      },
    ],
    [
      'one at a time',
      (url) => {
        const pool = new pg.Pool({ connectionString: url, max: POOL });
        const named = (name: string, text: string, values: unknown[]) => ({ name, text, values });
        return {
          run: async () => {
            const { agentId, key } = pick();
            await pool.query(
              named('key', 'SELECT * FROM accounts WHERE key_hash = $1', [hashes.get(agentId)]),
            );
            const client = await pool.connect();
            try {
              await client.query('BEGIN');
              const { rows } = await client.query(
                named('lock', 'SELECT * FROM accounts WHERE id = $1 FOR UPDATE', [agentId]),
              );
              await client.query(
                named('memory', 'SELECT * FROM memories WHERE agent_id = $1 AND key = $2', [agentId, key]),
              );
              const entry = debitOf(agentId, Number(rows[0].balance_cents) - 1);
              await client.query(
                named(
                  'debit',
                  'WITH next AS (UPDATE accounts SET ledger_seq = ledger_seq + 1, balance_cents = $5 ' +
                    'WHERE id = $1 RETURNING ledger_seq) INSERT INTO ledger (agent_id, id, at, operation, ' +
                    'amount_cents, balance_after_cents, cost_cents, seq) SELECT $1, $2, $3, $4, -1, $5, 1, ' +
                    'next.ledger_seq FROM next',
                  [agentId, entry.id, entry.at, entry.operation, entry.balanceAfterCents],
                ),
              );
              await client.query('COMMIT');
            } finally {
              client.release();
            }
          },
          close: () => pool.end(),
        };
      },
    ],
  ];

  console.log(
    `PostgreSQL ${cluster.address.host}:${cluster.address.port}, fsync on; ${data.memories.length} memories, ` +
      `${LOOPS} loops on a pool of ${POOL}; ${ROUNDS} rounds of ${SECONDS} s`,
  );
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [route, url] of routes) {
      for (const [way, open] of round % 2 ? ways : [...ways].reverse()) {
        const { run, close } = open(url);
        await Promise.all(Array.from({ length: POOL }, run)); // connect and prepare first
        const [own, postgres] = [ownCpu(), postgresCpu()];
        const end = Date.now() + SECONDS * 1000;
        let done = 0;
        await Promise.all(
          Array.from({ length: LOOPS }, async () => {
            while (Date.now() < end) {
              await run();
              done++;
            }
          }),
        );
        const perTx = (seconds: number) => `${Math.round((seconds * 1e6) / done)} µs`;
        console.log(
          `[${round}] ${route}, ${way}: ${Math.round(done / SECONDS)} tx/s; per transaction, this process ` +
            `${perTx(used(own, ownCpu()))}, PostgreSQL ${perTx(used(postgres, postgresCpu()))}`,
        );
        await close();
      }
    }
  }
} finally {
  await cluster.stop();
}

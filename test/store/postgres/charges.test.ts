/**
 * The charged operations of the PostgreSQL store as one statement each (issue 32: migration 0009,
 * src/store/postgres/postgres-charges.ts, statement-channel.ts), through the core as the faces run them: each is
 * one statement in one round trip with no transaction around it; the statements of many requests in one turn
 * leave in one write; a refusal writes nothing; a claim taken over fails the whole statement; and the answer an
 * idempotency key keeps is byte for byte the one sent, whatever the memory holds.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeLiveCache } from '../../../src/cache/node-live-cache.js';
import { createCore } from '../../../src/core/core.js';
import { AppError } from '../../../src/core/errors.js';
import { DEFAULT_LIMITS } from '../../../src/core/limits.js';
import type { LiveDataSource } from '../../../src/core/live-port.js';
import type { JsonObject } from '../../../src/core/model.js';
import type { StorePort } from '../../../src/core/store-port.js';
import { fieldsOf, parseInput } from '../../../src/core/validation.js';
import { PostgresCharges } from '../../../src/store/postgres/postgres-charges.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { createTransactionCharges } from '../../../src/store/transaction-charges.js';
import { type TestDatabase, testDatabase } from '../../helpers/postgres.js';
import { TcpRelay } from '../../helpers/tcp-relay.js';

const live: LiveDataSource = {
  fetch: async (type, query) => ({ data: { type, query }, source: 'test' }),
} as LiveDataSource;
const RETRIEVE = { charge: { operation: 'memory_retrieve' as const, cents: 1 } };
const STORE = { charge: { operation: 'memory_store' as const, cents: 1 } };

let database: TestDatabase;
let relay: TcpRelay;
let sent = 0;
let store: PostgresStore;
let core: ReturnType<typeof createCore>;
let admin: pg.Client;

/** The round trips (chunks the relay passed on) of `work`. */
async function roundTrips(work: () => Promise<unknown>): Promise<number> {
  const before = sent;
  await work();
  return sent - before;
}

async function register(email: string): Promise<string> {
  await core.accounts.register({ email });
  const { rows } = await admin.query('SELECT id FROM accounts WHERE email = $1', [email]);
  return rows[0].id as string;
}

async function money(id: string) {
  const { rows } = await admin.query(
    'SELECT a.balance_cents AS balance, a.ledger_seq AS seq, count(l.seq) AS entries, ' +
      'coalesce(sum(l.amount_cents), 0) AS sum FROM accounts a LEFT JOIN ledger l ON l.agent_id = a.id ' +
      'WHERE a.id = $1 GROUP BY a.balance_cents, a.ledger_seq',
    [id],
  );
  const row = rows[0];
  return {
    balance: Number(row.balance),
    seq: Number(row.seq),
    entries: Number(row.entries),
    sum: Number(row.sum),
  };
}

beforeAll(async () => {
  database = await testDatabase({ label: 'charges' });
  relay = await TcpRelay.to(database.address, {
    onClientData: () => {
      sent++;
    },
  });
  const url = new URL(database.url);
  url.port = String(relay.port);
  store = new PostgresStore({ connectionString: url.toString(), poolMax: 2 });
  core = createCore({ store, cache: createNodeLiveCache(60), live });
  admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
});
afterAll(async () => {
  await admin.end();
  await store.close();
  await relay.cut();
});

describe('a charged operation on PostgreSQL', () => {
  it('is one statement in one round trip, without BEGIN or COMMIT, and keeps the money whole', async () => {
    const agent = await register('one@example.com');
    await core.memories.storeMemory(
      agent,
      { memory_key: 'k', memory_value: 'v', memory_type: 'context' },
      STORE,
    );
    await core.memories.retrieveMemory(agent, { memory_key: 'k' }, RETRIEVE); // prepared on its connection
    const before = await money(agent);
    expect(await roundTrips(() => core.memories.retrieveMemory(agent, { memory_key: 'k' }, RETRIEVE))).toBe(
      1,
    );
    const write = { memory_key: 'k', memory_value: 'w', memory_type: 'context' as const };
    expect(await roundTrips(() => core.memories.storeMemory(agent, write, STORE))).toBe(1);
    const after = await money(agent);
    expect(after).toEqual({
      balance: before.balance - 2,
      seq: before.seq + 2,
      entries: before.entries + 2,
      sum: before.sum - 2,
    });
    expect(after.balance).toBe(after.sum);
  });

  it("sends the statements of many requests made in one turn in one write, one agent's on one connection", async () => {
    const agent = await register('many@example.com');
    await core.memories.storeMemory(
      agent,
      { memory_key: 'k', memory_value: 'v', memory_type: 'context' },
      STORE,
    );
    await core.memories.retrieveMemory(agent, { memory_key: 'k' }, RETRIEVE);
    const before = await money(agent);
    const trips = await roundTrips(() =>
      Promise.all(
        Array.from({ length: 20 }, () => core.memories.retrieveMemory(agent, { memory_key: 'k' }, RETRIEVE)),
      ),
    );
    expect(trips).toBe(1);
    const after = await money(agent);
    expect(after.balance).toBe(before.balance - 20);
    expect(after.seq).toBe(before.seq + 20);
  });

  it('refuses what the agent cannot pay, and a key it does not hold, writing nothing', async () => {
    const agent = await register('poor@example.com');
    await core.memories.storeMemory(
      agent,
      { memory_key: 'k', memory_value: 'v', memory_type: 'context' },
      STORE,
    );
    const missing = core.memories.retrieveMemory(agent, { memory_key: 'nope' }, RETRIEVE);
    await expect(missing).rejects.toMatchObject({ code: 'not_found' });
    const { balance } = await money(agent);
    const price = { charge: { operation: 'memory_retrieve' as const, cents: balance + 1 } };
    const before = await money(agent);
    const refused = core.memories.retrieveMemory(agent, { memory_key: 'k' }, price);
    await expect(refused).rejects.toMatchObject({
      code: 'insufficient_credits',
      details: { required_cents: balance + 1, credit_balance_cents: balance },
    });
    expect(await money(agent)).toEqual(before);
  });

  it('refuses past the daily limit, with what was spent today', async () => {
    const limited = createCore({
      store,
      cache: createNodeLiveCache(60),
      live,
      limits: { ...DEFAULT_LIMITS, dailySpendCents: 2 },
    });
    const agent = await register('daily@example.com');
    const write = { memory_key: 'k', memory_value: 'v', memory_type: 'context' as const };
    await limited.memories.storeMemory(agent, write, STORE);
    await limited.memories.retrieveMemory(agent, { memory_key: 'k' }, RETRIEVE);
    const before = await money(agent);
    const third = limited.memories.retrieveMemory(agent, { memory_key: 'k' }, RETRIEVE);
    await expect(third).rejects.toMatchObject({
      code: 'daily_limit_reached',
      details: { required_cents: 1, daily_limit_cents: 2, spent_today_cents: 2 },
    });
    expect(await money(agent)).toEqual(before);
  });

  it('fails whole when its idempotency claim was taken over, and charges nothing', async () => {
    const agent = await register('claim@example.com');
    await core.memories.storeMemory(
      agent,
      { memory_key: 'k', memory_value: 'v', memory_type: 'context' },
      STORE,
    );
    const before = await money(agent);
    const run = core.idempotency.run(
      agent,
      'memory_retrieve',
      'key-1',
      { memory_key: 'k' },
      async (record) => {
        // Another request takes the key over while this one runs (its lease ran out).
        await admin.query("UPDATE idempotency SET claim_token = 'someone else' WHERE agent_id = $1", [agent]);
        return core.memories.retrieveMemory(agent, { memory_key: 'k' }, { ...RETRIEVE, record });
      },
    );
    await expect(run).rejects.toMatchObject({ code: 'idempotency_in_progress' });
    expect(await money(agent)).toEqual(before);
  });

  it("keeps an idempotency key's answer byte for byte as sent, whatever the memory holds", async () => {
    const agent = await register('exact@example.com');
    const value = 'NUL \u0000 "quoted" back\\slash\nline\ttab \u0001 é ✓ 😀 \u2028';
    const metadata = { b: 1, a: ['\u0000', 'x"y', { n: null }], z: 1.5e300 };
    const inputs: [string, Record<string, unknown>][] = [
      [
        'memory_store',
        { memory_key: 'odd "key" ✓', memory_value: value, memory_type: 'fact', metadata, ttl_seconds: 3600 },
      ],
      ['memory_retrieve', { memory_key: 'odd "key" ✓' }],
      ['memory_history', { memory_key: 'odd "key" ✓', limit: 5 }],
      ['memory_restore', { memory_key: 'odd "key" ✓', version: 1 }],
      [
        'memory_store_batch',
        { memories: [{ memory_key: 'b1', memory_value: value, memory_type: 'context' }] },
      ],
    ];
    for (const [operation, input] of inputs) {
      const key = `exact-${operation}`;
      const outcome = await core.idempotency.run(
        agent,
        operation,
        key,
        input,
        async (record): Promise<JsonObject> => {
          const ctx = { charge: { operation: operation as 'memory_store', cents: 1 }, record };
          switch (operation) {
            case 'memory_store':
              return core.memories.storeMemory(agent, input as never, ctx);
            case 'memory_retrieve':
              return core.memories.retrieveMemory(agent, input as never, ctx);
            case 'memory_history':
              return core.memories.memoryHistory(agent, input as never, ctx);
            case 'memory_restore':
              return core.memories.restoreMemory(agent, input as never, ctx);
            default:
              return core.memories.storeBatch(agent, input as never, ctx);
          }
        },
      );
      const { rows } = await admin.query(
        'SELECT body::text AS body FROM idempotency WHERE agent_id = $1 AND key = $2',
        [agent, key],
      );
      expect(rows[0].body, operation).toBe(JSON.stringify(outcome.body));
    }
  });

  it('answers 404 for a version not kept, as the transaction path does', async () => {
    const agent = await register('restore@example.com');
    const restored = core.memories.restoreMemory(
      agent,
      { memory_key: 'never', version: 3 },
      { charge: { operation: 'memory_restore', cents: 1 } },
    );
    await expect(restored).rejects.toBeInstanceOf(AppError);
    await expect(restored).rejects.toMatchObject({
      code: 'not_found',
      details: { memory_key: 'never', version: 3 },
    });
  });

  it('writes a large import on the transaction path, and a smaller one in one statement, charging each memory', async () => {
    const agent = await register('import@example.com');
    await core.accounts.addCredits({ email: 'import@example.com', cents: 10_000 });
    const lines = (n: number, prefix: string) =>
      Array.from({ length: n }, (_, i) =>
        JSON.stringify({ memory_key: `${prefix}.${i}`, memory_value: `value ${i}`, memory_type: 'fact' }),
      ).join('\n');
    // The large import straight to the database: through the relay each of its round trips waits longer.
    const direct = new PostgresStore({ connectionString: database.url, poolMax: 2 });
    const directCore = createCore({ store: direct, cache: createNodeLiveCache(60), live });
    const importOf = (ndjson: string, through = core) => {
      const schema = through.schemas.ImportInput;
      return through.transfer.importMemories(agent, parseInput(schema, { ndjson }, fieldsOf(schema)), {
        charge: { operation: 'memory_import', cents: 1 },
      });
    };
    const before = await money(agent);
    // One statement for up to 1,000 lines: the plan's reads (every line's memory in one) and the statement,
    // whose 900 lines may take the relay a few chunks; a read per line would be 900 more.
    const trips = await roundTrips(async () => {
      const small = await importOf(lines(900, 'small'));
      expect(small).toMatchObject({ created: 900, cost_cents: 900 });
    });
    expect(trips).toBeLessThan(20);
    // More: the transaction path (BEGIN, its reads and writes, COMMIT: more round trips), the same answer.
    const large = await importOf(lines(1200, 'large'), directCore).finally(() => direct.close());
    expect(large).toMatchObject({
      created: 1200,
      cost_cents: 1200,
      credit_balance_cents: before.balance - 2100,
    });
    const after = await money(agent);
    expect(after).toEqual({
      balance: before.balance - 2100,
      seq: before.seq + 2,
      entries: before.entries + 2,
      sum: before.sum - 2100,
    });
    const { rows } = await admin.query('SELECT count(*)::int AS n FROM memories WHERE agent_id = $1', [
      agent,
    ]);
    expect(rows[0].n).toBe(2100);
  });

  it('leaves a restore whose version keeps changing to the transaction path, which answers it', async () => {
    const agent = await register('stale@example.com');
    for (const value of ['first', 'second'])
      await core.memories.storeMemory(
        agent,
        { memory_key: 's', memory_value: value, memory_type: 'context' },
        STORE,
      );
    // The restore's statement always finds its version changed: after three reads, the transaction path.
    let statements = 0;
    const alwaysStale = new PostgresCharges(
      {
        query: async (text, values) => {
          if (!text.includes('ac_memory_restore')) return admin.query(text, values);
          statements++;
          return { rows: [{ r: { refused: 'stale' } }] } as unknown as pg.QueryResult;
        },
      },
      createTransactionCharges(store),
      (work) => store.read(work),
    );
    const staleCore = createCore({
      store: Object.create(store, { charges: { value: alwaysStale } }) as StorePort,
      cache: createNodeLiveCache(60),
      live,
    });
    const before = await money(agent);
    const restored = await staleCore.memories.restoreMemory(
      agent,
      { memory_key: 's', version: 1 },
      { charge: { operation: 'memory_restore', cents: 1 } },
    );
    expect(restored).toMatchObject({ restored_from: 1, credit_balance_cents: before.balance - 1 });
    expect(statements).toBe(3);
    const read = await core.memories.retrieveMemory(agent, { memory_key: 's' }, RETRIEVE);
    expect(read.memory.memory_value).toBe('first');
    const after = await money(agent);
    expect(after.balance).toBe(after.sum);
    expect(after.seq).toBe(before.seq + 2);
  });

  it('refuses to fill an answer template with a missing value (a replay must never get an empty answer)', async () => {
    const filled = await admin.query(
      "SELECT ac_fill(ROW(ARRAY['{\"a\":', '}'], ARRAY['x'])::ac_template, ROW(ARRAY['x'], ARRAY['1'])::ac_values) AS t",
    );
    expect(filled.rows[0].t).toBe('{"a":1}');
    await expect(
      admin.query(
        "SELECT ac_fill(ROW(ARRAY['{\"a\":', '}'], ARRAY['y'])::ac_template, ROW(ARRAY['x'], ARRAY['1'])::ac_values)",
      ),
    ).rejects.toMatchObject({ code: 'XX000' });
  });
});

/**
 * kill -9 at random moments under concurrent load, many times: after each restart every acknowledged
 * store is present, every balance equals its ledger, and the store loads. A second server on the same
 * DATA_DIR is refused meanwhile.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { hashKey } from '../../src/core/accounts.js';
import { openService } from '../../src/service.js';
import { openJsonFileStore } from '../../src/store/json/json-file-store.js';
import { CLI, spawnServe } from '../helpers/spawn-serve.js';
import { request } from '../helpers/test-server.js';

const ROUNDS = 6;

describe('crash safety', () => {
  let dataDir: string;
  const keys: string[] = [];
  const acknowledged = new Map<string, { key: string; value: string }>();

  const config = () => loadConfig({ DATA_DIR: dataDir, AC_LOG_LEVEL: 'silent' });

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'ac-crash-'));
    const service = await openService(config(), { command: 'test' });
    for (let i = 0; i < 3; i++) {
      const { agent_key, email } = await service.core.accounts.register({ email: `crash${i}@example.com` });
      await service.core.accounts.addCredits({ email, cents: 1_000_000 });
      keys.push(agent_key);
    }
    await service.close();
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it(`loses no acknowledged write over ${ROUNDS} kill -9 rounds`, { timeout: 120_000 }, async () => {
    let counter = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const server = await spawnServe({ DATA_DIR: dataDir, AC_LOG_LEVEL: 'info' });

      if (round === 0) {
        const second = spawn(process.execPath, [CLI, 'serve', '--port', '0'], {
          env: { ...process.env, DATA_DIR: dataDir },
        });
        let err = '';
        second.stderr.on('data', (d) => {
          err += d;
        });
        expect(await new Promise((r) => second.on('exit', r))).toBe(1);
        expect(err).toContain(`pid ${server.child.pid}`);
      }

      let stop = false;
      const worker = async (w: number) => {
        while (!stop) {
          const key = keys[w % keys.length] as string;
          const memoryKey = `r${round}-w${w}-${counter++}`;
          const value = `v-${memoryKey}`;
          try {
            const res = await request(server.url, 'POST', '/api/ac/memory', {
              key,
              body: { agent_key: key, memory_key: memoryKey, memory_value: value, metadata: { round } },
            });
            if (res.status === 200) acknowledged.set(`${key}/${memoryKey}`, { key: memoryKey, value });
          } catch {
            return; // the server died mid-request: not acknowledged
          }
        }
      };
      const workers = Array.from({ length: 8 }, (_, w) => worker(w));
      await new Promise((r) => setTimeout(r, 150 + Math.floor(Math.random() * 350)));
      server.child.kill('SIGKILL');
      await server.exited;
      stop = true;
      await Promise.all(workers);

      // Restart: the store loads, holds every acknowledged write, and every balance equals its ledger.
      const { store } = await openJsonFileStore(dataDir, {
        pid: process.pid,
        command: 'verify',
        startedAt: 'now',
      });
      try {
        await store.read(async (reader) => {
          for (const agentKey of keys) {
            const account = await reader.findAccountByKeyHash(hashKey(agentKey));
            expect(account).toBeDefined();
            const ledger = await reader.listLedger(account?.id as string, Number.MAX_SAFE_INTEGER);
            expect(ledger.reduce((sum, e) => sum + e.amountCents, 0)).toBe(account?.balanceCents);
            expect(account?.balanceCents).toBeGreaterThanOrEqual(0);
          }
          for (const [id, { key, value }] of acknowledged) {
            const account = await reader.findAccountByKeyHash(hashKey(id.slice(0, id.indexOf('/'))));
            const memory = await reader.getMemory(account?.id as string, key);
            expect(memory?.value, `${key} after round ${round}`).toBe(value);
          }
        });
      } finally {
        await store.close();
      }
    }
    expect(acknowledged.size).toBeGreaterThan(ROUNDS * 5);
  });
});

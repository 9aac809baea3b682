/** The agent-context command as users run it: `serve` from dist/, `credits add`, bad configuration. */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_FILE } from '../src/store/json/json-file-store.js';
import { type ProcessRun, runProcess } from './helpers/run-process.js';
import { CLI, spawnServe } from './helpers/spawn-serve.js';
import { request } from './helpers/test-server.js';

function run(args: string[], env: Record<string, string>): Promise<ProcessRun> {
  return runProcess(process.execPath, [CLI, ...args], { ...process.env, ...env });
}

describe('agent-context CLI', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'ac-cli-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('serves; without an admin token an operator command names the server and what to do; after SIGTERM it tops up directly', async () => {
    const { child, url, stderr, exited } = await spawnServe({ DATA_DIR: dataDir });
    const reg = await request(url, 'POST', '/api/ac/register', { body: { email: 'cli@example.com' } });
    expect(reg.status).toBe(200);
    const key = reg.body.agent_key as string;
    await request(url, 'GET', `/api/ac/account?agent_key=${key}`, { key });

    const refused = await run(['credits', 'add', '--email', 'cli@example.com', '--cents', '10'], {
      DATA_DIR: dataDir,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`pid ${child.pid}`);
    expect(refused.stderr).toContain(url);
    expect(refused.stderr).toContain('/api/ac/admin/credits');
    expect(refused.stderr).toContain('AC_ADMIN_TOKEN');
    expect(refused.stderr).not.toMatch(/at .+\.js:\d+/);

    // One log line per request, never the key.
    expect(stderr()).toContain('"path":"/api/ac/register"');
    expect(stderr()).not.toContain(key);

    child.kill('SIGTERM');
    const code = await exited;
    expect(code).toBe(0);

    const added = await run(['credits', 'add', '--email', 'CLI@example.com', '--cents', '25'], {
      DATA_DIR: dataDir,
    });
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toEqual({
      success: true,
      email: 'cli@example.com',
      credited_cents: 25,
      credit_balance_cents: 75,
    });
  });

  it('while a server with an admin token runs, credits add and accounts plan go through its admin routes', async () => {
    const token = 'operator-token-0123456789';
    const dir = await mkdtemp(path.join(tmpdir(), 'ac-cli-admin-'));
    const server = await spawnServe({ DATA_DIR: dir, AC_ADMIN_TOKEN: token });
    try {
      const reg = await request(server.url, 'POST', '/api/ac/register', {
        body: { email: 'ops@example.com' },
      });
      const key = reg.body.agent_key as string;
      const env = { DATA_DIR: dir, AC_ADMIN_TOKEN: token };
      const added = await run(['credits', 'add', '--email', 'ops@example.com', '--cents', '7'], env);
      expect(added.code, added.stderr).toBe(0);
      expect(JSON.parse(added.stdout)).toMatchObject({ credited_cents: 7, credit_balance_cents: 57 });
      const plan = await run(['accounts', 'plan', '--email', 'ops@example.com', 'unlimited'], env);
      expect(plan.code, plan.stderr).toBe(0);
      expect(JSON.parse(plan.stdout)).toEqual({
        success: true,
        email: 'ops@example.com',
        plan: 'unlimited',
        previous_plan: 'pay-as-you-go',
        changed: true,
        credit_balance_cents: 57,
      });
      const account = await request(server.url, 'GET', '/api/ac/account', { key });
      expect(account.body).toMatchObject({ plan: 'unlimited', credit_balance_cents: 57 });

      const wrong = await run(['accounts', 'plan', '--email', 'ops@example.com', 'pay-as-you-go'], {
        ...env,
        AC_ADMIN_TOKEN: 'not-the-servers-token-000',
      });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain('answered 401');
      expect(wrong.stderr).toContain('AC_ADMIN_TOKEN is the token the server was started with');
      const badPlan = await run(['accounts', 'plan', '--email', 'ops@example.com', 'gold'], env);
      expect(badPlan.code).toBe(1);
      expect(badPlan.stderr).toMatch(/plan must be one of .*pay-as-you-go.*unlimited/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('moves an account between plans on the store directly, and refuses an unknown e-mail', async () => {
    const plan = await run(['accounts', 'plan', '--email', 'cli@example.com', 'unlimited'], {
      DATA_DIR: dataDir,
    });
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ plan: 'unlimited', previous_plan: 'pay-as-you-go' });
    const again = await run(
      ['--data-dir', dataDir, 'accounts', 'plan', '--email', 'cli@example.com', 'unlimited'],
      {},
    );
    expect(JSON.parse(again.stdout)).toMatchObject({ plan: 'unlimited', changed: false });
    const back = await run(
      ['accounts', 'plan', '--email', 'cli@example.com', 'pay-as-you-go', '--data-dir', dataDir],
      {},
    );
    expect(JSON.parse(back.stdout)).toMatchObject({ plan: 'pay-as-you-go', previous_plan: 'unlimited' });
    const unknown = await run(['accounts', 'plan', '--email', 'nobody@example.com', 'unlimited'], {
      DATA_DIR: dataDir,
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No account is registered with nobody@example.com/);
  });

  it('explains an unknown e-mail and a bad amount', async () => {
    const unknown = await run(['credits', 'add', '--email', 'nobody@example.com', '--cents', '5'], {
      DATA_DIR: dataDir,
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No account is registered with nobody@example.com/);
    const bad = await run(['credits', 'add', '--email', 'cli@example.com', '--cents', '-3'], {
      DATA_DIR: dataDir,
    });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/positive whole number/);
  });

  it('stops start-up on a bad setting with a message naming it', async () => {
    const res = await run(['serve'], {
      DATA_DIR: dataDir,
      PORT: 'eighty',
      AC_OPEN_METEO_FORECAST_URL: 'ftp://x',
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('Invalid configuration');
    expect(res.stderr).toContain('PORT="eighty"');
    expect(res.stderr).toContain('AC_OPEN_METEO_FORECAST_URL');
    expect(res.stderr).not.toMatch(/at .+\.js:\d+/);
  });

  it("--default-data-dir (npm start's data/) gives way to DATA_DIR, and is the store when nothing else is set", async () => {
    const fallback = path.join(dataDir, 'checkout-data');
    const chosen = path.join(dataDir, 'from-env');
    const env = { ...process.env } as Record<string, string>;
    delete env.DATA_DIR;
    delete env.DATABASE_URL;
    for (const [extra, expected] of [
      [{ DATA_DIR: chosen }, chosen],
      [{}, fallback],
    ] as const) {
      const server = await spawnServe({ ...env, ...extra }, CLI, ['--default-data-dir', fallback]);
      try {
        expect(server.stderr()).toContain(`store: ${expected}`);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
      await expect(stat(path.join(expected, STORE_FILE))).resolves.toBeTruthy();
    }
  });

  it('refuses a port in use with a sentence, not a stack trace', async () => {
    const server = await spawnServe({ DATA_DIR: dataDir });
    try {
      const port = new URL(server.url).port;
      const dir = await mkdtemp(path.join(tmpdir(), 'ac-cli-port-'));
      const res = await run(['serve', '--port', port], { DATA_DIR: dir });
      await rm(dir, { recursive: true, force: true });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`Cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
      expect(res.stderr).not.toMatch(/at .+\.js:\d+/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('setup takes --data-dir before or after the command, as every command does', async () => {
    for (const args of [
      ['setup', 'generic', '--data-dir', dataDir],
      ['--data-dir', dataDir, 'setup', 'generic'],
    ]) {
      const res = await run(args, {});
      expect(res.code, res.stderr).toBe(0);
      expect(JSON.parse(res.stdout).mcpServers['agent-context'].env).toEqual({ DATA_DIR: dataDir });
    }
  });

  it("memories export writes an agent's memories as NDJSON, the same as REST; a running server is named", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'ac-cli-export-'));
    try {
      const { child, url, exited } = await spawnServe({ DATA_DIR: dir });
      const reg = await request(url, 'POST', '/api/ac/register', { body: { email: 'export@example.com' } });
      const key = reg.body.agent_key as string;
      for (const [memory_key, memory_value] of [
        ['b', 'second'],
        ['a', 'first\u0000 with NUL and 🙂'],
      ]) {
        const res = await request(url, 'POST', '/api/ac/memory', {
          key,
          body: { agent_key: key, memory_key, memory_value },
        });
        expect(res.status).toBe(200);
      }
      const rest = await (
        await fetch(`${url}/api/ac/memory/export`, { headers: { 'X-API-Key': key } })
      ).text();
      const held = await run(['memories', 'export', '--email', 'export@example.com'], { DATA_DIR: dir });
      expect(held.code).toBe(1);
      expect(held.stderr).toContain(`${url}/api/ac/memory/export`);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);

      const out = await run(['memories', 'export', '--email', 'Export@Example.com'], { DATA_DIR: dir });
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toBe(rest);
      expect(
        out.stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l).memory_key),
      ).toEqual(['a', 'b']);
      expect(out.stderr).toContain('exported 2 memories');
      const unknown = await run(['memories', 'export', '--email', 'nobody@example.com'], { DATA_DIR: dir });
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('No account is registered');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('prints help', async () => {
    const res = await run(['--help'], {});
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('serve');
    expect(res.stdout).toContain('credits');
  });
});

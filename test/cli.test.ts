/** The agent-context command as users run it: `serve` from dist/, `credits add`, bad configuration. */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, spawnServe } from './helpers/spawn-serve.js';
import { request } from './helpers/test-server.js';

function run(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('agent-context CLI', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'ac-cli-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('serves, refuses a second writer, stops on SIGTERM and then tops up from the command line', async () => {
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

  it('prints help', async () => {
    const res = await run(['--help'], {});
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('serve');
    expect(res.stdout).toContain('credits');
  });
});

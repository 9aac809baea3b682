/**
 * The official MCP conformance suite against /mcp of a real server. The baseline file lists only the
 * scenarios that need the reference server's fixtures; every other scenario must pass.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const MUST_PASS = [
  'server-initialize',
  'logging-set-level',
  'ping',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-error',
  'server-sse-multiple-streams',
  'resources-list',
  'prompts-list',
  'dns-rebinding-protection',
];

describe('MCP conformance suite', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ live: new FakeLiveSource() });
  });
  afterAll(() => server.close());

  it('passes every scenario outside the fixture baseline', { timeout: 240_000 }, async () => {
    const bin = path.resolve('node_modules/@modelcontextprotocol/conformance/dist/index.js');
    const args = [
      bin,
      'server',
      '--url',
      `${server.url}/mcp`,
      '--expected-failures',
      'conformance-baseline.yml',
    ];
    const child = spawn(process.execPath, args, { env: { ...process.env, NO_COLOR: '1' } });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const code = await new Promise((r) => child.on('exit', r));
    expect(output).toContain('Baseline check passed');
    for (const scenario of MUST_PASS)
      expect(output).toMatch(new RegExp(`✓ ${scenario}: \\d+ passed, 0 failed`));
    expect(code, output.slice(-2000)).toBe(0);
  });
});

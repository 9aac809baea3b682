/**
 * What a run of `npm run bench` ran on: the machine, the code (its commit, and src/'s uncommitted files), the
 * versions of what was measured, and the command with its settings.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, release, totalmem, type } from 'node:os';
import path from 'node:path';
import type { Machine, PostgresSetup } from '../report/results.js';
import { ROOT } from '../shared/build.mjs';

export function describeMachine(): Machine {
  let cpu = cpus()[0]?.model?.trim() ?? 'unknown CPU';
  try {
    const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
    cpu = cpuinfo.match(/^model name\s*:\s*(.+)$/m)?.[1]?.trim() ?? cpu;
  } catch {
    // not Linux: keep os.cpus()'s
  }
  return {
    cpu,
    cores: availableParallelism(),
    memoryGb: totalmem() / 1024 ** 3,
    os: `${type()} ${release()}`,
    node: process.version,
  };
}

export function gitInfo(): { commit: string; dirtyFiles: string[] } {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--', 'src'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const dirtyFiles = status
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(3));
    return { commit, dirtyFiles };
  } catch {
    return { commit: 'unknown', dirtyFiles: [] };
  }
}

function versionOf(name: string): string {
  try {
    const file = path.join(ROOT, 'node_modules', ...name.split('/'), 'package.json');
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export function commandLine(): string {
  const vars = Object.keys(process.env)
    .filter((name) => name.startsWith('BENCH_'))
    .sort()
    .map((name) => `${name}=${process.env[name]}`);
  return [...vars, 'npm run bench'].join(' ');
}

/** The versions of agent-context and of what it was measured with (pg and PostgreSQL's when measured). */
export function versions(postgres: PostgresSetup | undefined): Record<string, string> {
  return {
    'agent-context': (
      JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }
    ).version,
    express: versionOf('express'),
    autocannon: versionOf('autocannon'),
    '@modelcontextprotocol/sdk': versionOf('@modelcontextprotocol/sdk'),
    '@modelcontextprotocol/server-memory': versionOf('@modelcontextprotocol/server-memory'),
    lowdb: versionOf('lowdb'),
    ...(postgres ? { pg: versionOf('pg'), postgresql: postgres.version } : {}),
  };
}

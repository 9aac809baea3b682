/** `setup --write` on real files in a temporary directory: create, merge, back up, stay idempotent, refuse. */
import { chmod, lstat, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mergeServerEntry, planMerge, sameJson } from '../../src/setup/merge-config.js';
import { SetupError } from '../../src/setup/setup-error.js';
import { ClaudeDesktopConfig } from './client-schemas.js';

const entry = {
  command: '/usr/bin/node',
  args: ['/opt/ac/dist/cli.js', 'mcp'],
  env: { DATA_DIR: '/srv/ac' },
};
const now = () => new Date('2026-05-01T10:20:30.000Z');
const STAMP = '2026-05-01T102030.000Z';

const EXISTING = `{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "memory": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"]
    }
  },
  "preferences": { "theme": "dark" }
}
`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ac-setup-merge-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

async function files(): Promise<string[]> {
  return (await readdir(dir)).sort();
}

describe('mergeServerEntry', () => {
  it('creates the file and its directories when absent, without a backup', async () => {
    const file = path.join(dir, 'deep', 'er', 'config.json');
    const outcome = await mergeServerEntry({
      file,
      containerKey: 'mcpServers',
      name: 'agent-context',
      entry,
      now,
    });
    expect(outcome).toEqual({ status: 'created', file });
    const text = await readFile(file, 'utf8');
    expect(ClaudeDesktopConfig.parse(JSON.parse(text)).mcpServers['agent-context']).toEqual(entry);
    expect(await readdir(path.dirname(file))).toEqual(['config.json']);
  });

  it('adds the entry, leaves the rest byte for byte, and keeps the old file as a backup', async () => {
    const file = path.join(dir, 'claude_desktop_config.json');
    await writeFile(file, EXISTING);
    const outcome = await mergeServerEntry({
      file,
      containerKey: 'mcpServers',
      name: 'agent-context',
      entry,
      now,
    });
    expect(outcome).toEqual({ status: 'added', file, backup: `${file}.backup-${STAMP}` });
    expect(await readFile(`${file}.backup-${STAMP}`, 'utf8')).toBe(EXISTING);

    const text = await readFile(file, 'utf8');
    const config = ClaudeDesktopConfig.parse(JSON.parse(text));
    expect(Object.keys(config.mcpServers)).toEqual(['memory', 'agent-context']);
    expect(config.mcpServers['agent-context']).toEqual(entry);
    const inserted = `,\n    "agent-context": ${JSON.stringify(entry, null, 2).split('\n').join('\n    ')}`;
    const at = EXISTING.indexOf('\n  },\n  "preferences"') - '    }'.length;
    expect(text).toBe(
      EXISTING.slice(0, at + '    }'.length) + inserted + EXISTING.slice(at + '    }'.length),
    );
  });

  it('changes nothing and writes no backup the second time', async () => {
    const file = path.join(dir, 'config.json');
    await writeFile(file, EXISTING);
    await mergeServerEntry({ file, containerKey: 'mcpServers', name: 'agent-context', entry, now });
    const first = await readFile(file, 'utf8');
    const listed = await files();
    const again = await mergeServerEntry({
      file,
      containerKey: 'mcpServers',
      name: 'agent-context',
      entry,
      now,
    });
    expect(again).toEqual({ status: 'unchanged', file });
    expect(await readFile(file, 'utf8')).toBe(first);
    expect(await files()).toEqual(listed);
  });

  it('updates an entry of the same name, with a backup that never overwrites an earlier one', async () => {
    const file = path.join(dir, 'config.json');
    await writeFile(file, EXISTING);
    await mergeServerEntry({ file, containerKey: 'mcpServers', name: 'agent-context', entry, now });
    const before = await readFile(file, 'utf8');
    const moved = { ...entry, env: { DATA_DIR: '/srv/other' } };
    const outcome = await mergeServerEntry({
      file,
      containerKey: 'mcpServers',
      name: 'agent-context',
      entry: moved,
      now,
    });
    expect(outcome).toEqual({ status: 'updated', file, backup: `${file}.backup-${STAMP}-2` });
    expect(await readFile(`${file}.backup-${STAMP}-2`, 'utf8')).toBe(before);
    expect(JSON.parse(await readFile(file, 'utf8')).mcpServers['agent-context']).toEqual(moved);
    expect(JSON.parse(await readFile(file, 'utf8')).mcpServers.memory.command).toBe('npx');
  });

  it('refuses a file that is not JSON, naming it and the place, and leaves it untouched', async () => {
    const file = path.join(dir, 'config.json');
    const broken = '{\n  "mcpServers": {\n    "memory": { "command": "npx" }\n    "other": {}\n  }\n}\n';
    await writeFile(file, broken);
    const error = await mergeServerEntry({
      file,
      containerKey: 'mcpServers',
      name: 'agent-context',
      entry,
      now,
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(SetupError);
    expect((error as Error).message).toMatch(
      / is not valid JSON \(CommaExpected at line 4, column 5\)\. Fix it/,
    );
    expect((error as Error).message.startsWith(`${file} is not valid JSON`)).toBe(true);
    expect(await readFile(file, 'utf8')).toBe(broken);
    expect(await files()).toEqual(['config.json']);
  });

  it('refuses a top level that is not an object and a server table that is not an object', async () => {
    const file = path.join(dir, 'config.json');
    for (const [text, message] of [
      ['[1, 2]\n', /holds an array, but a configuration file must hold a JSON object/],
      ['{ "mcpServers": [] }\n', /"mcpServers" in .* is an array, but it must be an object of servers/],
      ['{ "mcpServers": null }\n', /"mcpServers" in .* is null/],
    ] as const) {
      await writeFile(file, text);
      await expect(
        mergeServerEntry({ file, containerKey: 'mcpServers', name: 'agent-context', entry, now }),
      ).rejects.toThrow(message);
      expect(await readFile(file, 'utf8')).toBe(text);
    }
    expect(await files()).toEqual(['config.json']);
  });

  it("keeps a byte-order mark, the file's permissions, and a symlink pointing where it did", async () => {
    const real = path.join(dir, 'real.json');
    const link = path.join(dir, 'link.json');
    await writeFile(real, `\uFEFF${EXISTING}`);
    await chmod(real, 0o600);
    await symlink(real, link);
    await mergeServerEntry({ file: link, containerKey: 'mcpServers', name: 'agent-context', entry, now });
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    const text = await readFile(real, 'utf8');
    expect(text.startsWith('\uFEFF{\n  "globalShortcut"')).toBe(true);
    expect(JSON.parse(text.slice(1)).mcpServers['agent-context']).toEqual(entry);
    if (process.platform !== 'win32') expect((await stat(real)).mode & 0o777).toBe(0o600);
    expect(await readFile(`${link}.backup-${STAMP}`, 'utf8')).toBe(`\uFEFF${EXISTING}`);
  });

  it('fills an empty file', async () => {
    const file = path.join(dir, 'config.json');
    await writeFile(file, '\n');
    const outcome = await mergeServerEntry({
      file,
      containerKey: 'servers',
      name: 'agent-context',
      entry,
      now,
    });
    expect(outcome.status).toBe('added');
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ servers: { 'agent-context': entry } });
  });
});

describe('planMerge', () => {
  it('treats an entry with its keys in another order as up to date', () => {
    const text = JSON.stringify({
      mcpServers: { 'agent-context': { args: entry.args, env: entry.env, command: entry.command } },
    });
    expect(planMerge('f', text, { containerKey: 'mcpServers', name: 'agent-context', entry })).toEqual({
      status: 'unchanged',
    });
  });

  it('compares JSON values structurally', () => {
    expect(sameJson({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBe(true);
    expect(sameJson({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(sameJson([], {})).toBe(false);
  });
});

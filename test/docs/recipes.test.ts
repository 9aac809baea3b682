/**
 * The client recipes in README.md, docs/mcp.md and the top-level mcp.json are what `agent-context setup
 * --npx` prints, and the MCP Inspector commands pin the release the test suite runs, so they cannot drift.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { createOperations } from '../../src/core/operation-table.js';
import { PRICES } from '../../src/core/pricing.js';
import { createSchemas } from '../../src/core/schemas.js';
import { portableSetupOutput } from '../../src/setup/setup-output.js';

const read = (file: string) => readFile(file, 'utf8');

/** The JSON code blocks of a Markdown text that declare the `agent-context` stdio server. */
function serverBlocks(markdown: string): unknown[] {
  return [...markdown.matchAll(/```json\n([\s\S]*?)```/g)]
    .map((match) => match[1] as string)
    .filter((block) => block.includes('"mcpServers"') && block.includes('"agent-context"'))
    .map((block) => JSON.parse(block));
}

describe('client recipes', () => {
  const generic = JSON.parse(portableSetupOutput('generic'));

  it('mcp.json is the portable entry `setup generic --npx` prints', async () => {
    expect(JSON.parse(await read('mcp.json'))).toEqual(generic);
  });

  it('the README and docs/mcp.md show the portable entry exactly', async () => {
    for (const file of ['README.md', 'docs/mcp.md']) {
      const blocks = serverBlocks(await read(file));
      expect(blocks.length, file).toBeGreaterThan(0);
      for (const block of blocks) {
        const entry = (block as { mcpServers: Record<string, unknown> }).mcpServers['agent-context'];
        if ((entry as { command?: string }).command === 'npx') expect(block, file).toEqual(generic);
      }
    }
    const readme = await read('README.md');
    expect(readme).toContain('npx -y agent-context setup claude-desktop --write');
  });

  it("docs/mcp.md's Claude Code and VS Code lines are setup's", async () => {
    const mcp = await read('docs/mcp.md');
    expect(mcp).toContain(portableSetupOutput('claude-code').trim());
    const vscode = JSON.parse(portableSetupOutput('vscode')).servers['agent-context'];
    expect(mcp).toContain(JSON.stringify(vscode).replaceAll(',', ', ').replaceAll(':', ': ').slice(1, -1));
  });

  it('every Inspector command pins the version the test suite runs', async () => {
    const pinned = JSON.parse(await read('package.json')).devDependencies['@modelcontextprotocol/inspector'];
    for (const file of ['README.md', 'docs/mcp.md']) {
      const text = await read(file);
      const uses = [...text.matchAll(/@modelcontextprotocol\/inspector(@[\w.-]+)?/g)].map((m) => m[1]);
      expect(uses.length, file).toBeGreaterThan(0);
      for (const version of uses) expect(version, file).toBe(`@${pinned}`);
    }
  });
});

describe("the README's price table", () => {
  it('states the prices the operation table charges', async () => {
    const readme = await read('README.md');
    const cost = new Map(createOperations(createSchemas(DEFAULT_LIMITS)).map((op) => [op.name, op.cost]));
    const memory = cost.get('memory_store')?.cents;
    expect(cost.get('memory_retrieve')?.cents).toBe(memory);
    expect(cost.get('memory_search')?.cents).toBe(memory);
    expect(cost.get('memory_history')?.cents).toBe(memory);
    expect(cost.get('memory_restore')?.cents).toBe(memory);
    expect(cost.get('memory_store_batch')).toMatchObject({ cents: memory, per: 'memory' });
    expect(cost.get('memory_import')).toMatchObject({ cents: memory, per: 'memory' });
    const data = cost.get('data');
    for (const free of [
      'register',
      'account',
      'account_transactions',
      'account_usage',
      'memory_delete',
      'memory_export',
    ])
      expect(cost.get(free)?.cents, free).toBe(0);
    expect(readme).toContain(
      '| ping, register, account, ledger, usage, delete memory, export memories | 0 |',
    );
    expect(readme).toContain(
      `| store, retrieve; list or search memories (a page); memory history; restore a version | ${memory} |`,
    );
    expect(readme).toContain(
      `| store memories in a batch; import memories (each written) | ${memory} per memory |`,
    );
    expect(readme).toContain(`| live data: fresh / from cache | ${data?.cents} / ${data?.cachedCents} |`);
    expect(readme).toContain(`| starter credit at registration | +${PRICES.starterCredit} |`);
  });
});

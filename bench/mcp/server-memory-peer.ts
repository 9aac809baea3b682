/**
 * The peer: @modelcontextprotocol/server-memory over stdio, its graph file in a temp dir
 * (MEMORY_FILE_PATH). The graph is built to `entities` with batched create_entities calls, then sequential
 * create_entities (one new entity with a ~200-byte observation per call) and open_nodes are measured.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { memoryValue } from '../shared/prefill.js';
import { connectStdio } from './mcp-stdio-client.js';
import { type McpResult, sequential } from './sequential-calls.js';

const BATCH = 500;

export function serverMemoryEntry(): string {
  const require = createRequire(import.meta.url);
  const packageJson = require.resolve('@modelcontextprotocol/server-memory/package.json');
  return path.join(path.dirname(packageJson), 'dist', 'index.js');
}

export async function benchServerMemory(opts: {
  dir: string;
  entities: number;
  seconds: number;
  warmupSeconds: number;
}): Promise<{ results: McpResult[]; buildMs: number }> {
  const connection = await connectStdio('server-memory', process.execPath, [serverMemoryEntry()], {
    MEMORY_FILE_PATH: path.join(opts.dir, 'memory.jsonl'),
    NODE_ENV: 'production',
  });
  try {
    const entity = (name: string, seed: string) => ({
      name,
      entityType: 'bench',
      observations: [memoryValue(seed)],
    });
    const buildStarted = performance.now();
    for (let from = 0; from < opts.entities; from += BATCH) {
      const entities = [];
      for (let i = from; i < Math.min(opts.entities, from + BATCH); i++)
        entities.push(entity(`entity-${i}`, `${i}`));
      const result = await connection.client.callTool({ name: 'create_entities', arguments: { entities } });
      if (result.isError)
        throw new Error(`building the graph: ${JSON.stringify(result.content).slice(0, 300)}`);
    }
    const buildMs = performance.now() - buildStarted;
    let created = 0;
    const create = await sequential(
      'server-memory create_entities',
      1,
      opts.entities,
      opts.seconds,
      opts.warmupSeconds,
      async (i) => {
        const result = await connection.client.callTool({
          name: 'create_entities',
          arguments: { entities: [entity(`new-entity-${i}`, `new.${i}`)] },
        });
        if (!result.isError) created++;
        return result;
      },
    );
    const open = await sequential(
      'server-memory open_nodes',
      1,
      opts.entities + created,
      opts.seconds,
      opts.warmupSeconds,
      () =>
        connection.client.callTool({
          name: 'open_nodes',
          arguments: { names: [`entity-${Math.floor(Math.random() * opts.entities)}`] },
        }),
    );
    return { results: [create, open], buildMs };
  } finally {
    await connection.close();
  }
}

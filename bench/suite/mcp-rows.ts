/**
 * `npm run bench`'s MCP over stdio rows: agent-context on a fresh store in each protocol era, in rounds, then the
 * peer (@modelcontextprotocol/server-memory) once.
 */
import { benchAgentContextStdio } from '../mcp/agent-context-stdio.js';
import { benchServerMemory } from '../mcp/server-memory-peer.js';
import { makeTempDir } from '../shared/cleanup.js';
import { formatNumber } from '../shared/number-format.js';
import { prefillStore } from '../shared/prefill.js';
import type { Collector } from './collector.js';
import { progress } from './progress.js';
import { MODERN_STDIO_SUFFIX } from './scenario-names.js';
import type { SuiteSettings } from './settings.js';

export async function measureAgentContextStdio(settings: SuiteSettings, collector: Collector): Promise<void> {
  for (const era of ['legacy', 'modern'] as const) {
    const suffix = era === 'modern' ? MODERN_STDIO_SUFFIX : '';
    progress(`agent-context MCP over stdio${suffix} with ${formatNumber(settings.mcpMemories)} memories`);
    const { dir, remove } = await makeTempDir('mcp');
    const prefill = await prefillStore(dir, settings.mcpMemories, settings.agents);
    const results = await benchAgentContextStdio({
      dataDir: dir,
      agent: prefill.agents[0] as (typeof prefill.agents)[number],
      memories: prefill.memories,
      seconds: settings.seconds,
      warmupSeconds: settings.warmupSeconds,
      rounds: settings.rounds,
      era,
      suffix,
    });
    for (const result of results) collector.noteMcp(result, true);
    await remove();
  }
}

/** The peer, measured once for as long as agent-context's rounds together (its calls are slow): its graph's build time. */
export async function measurePeer(settings: SuiteSettings, collector: Collector): Promise<number> {
  progress(
    `@modelcontextprotocol/server-memory over stdio, graph of ${formatNumber(settings.peerEntities)} entities`,
  );
  const { dir, remove } = await makeTempDir('server-memory');
  const peer = await benchServerMemory({
    dir,
    entities: settings.peerEntities,
    seconds: settings.seconds * settings.rounds,
    warmupSeconds: settings.warmupSeconds,
  });
  for (const result of peer.results) collector.noteMcp(result, false);
  await remove();
  return peer.buildMs;
}
